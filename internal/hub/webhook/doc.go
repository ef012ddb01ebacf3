// Package webhook is the hub's validating admission webhook: it enforces the permissions OCM
// guards with its registration webhook, which RBAC alone cannot express because they hang on a
// field or label rather than on a verb.
//
//   - Setting a ManagedCluster's spec.hubAcceptsClient from false (or absent) to true needs
//     update on the virtual subresource managedclusters/accept in register.open-cluster-management.io.
//   - Putting a ManagedCluster in a set, taking it out or moving it (the label
//     cluster.open-cluster-management.io/clusterset) needs create on managedclustersets/join for
//     every set it enters or leaves.
//   - Creating a ManagedClusterSetBinding, or pointing one at another set, needs create on
//     managedclustersets/bind for spec.clusterSet.
//   - A cluster's agent (or an add-on's) may not change its ManagedCluster's spec or labels
//     (agent.go): the hub trusts them (taints, labels placements select by, the API server
//     addresses the Kueue controller connects to, the lease period). RBAC already gives the agent
//     only the status; this holds where an administrator granted it more, as OCM's role does.
//   - A ManagedCluster's status.clusterClaims may be changed (a claim added, removed, its value
//     changed, the list reordered) only by that cluster's own registration agent: a user name of
//     its agents with its cluster's group, as the certificates the hub approves say (claims.go).
//     Administrators, other clusters' agents, add-on agents and the hub are refused, naming the
//     claims and the fix (a ClusterClaim on the cluster, which its agent reports). Claims are the
//     cluster's own word: placements select by them, and the FederatedLearning controller gives a
//     client only to a cluster that reports the data claim, with the data path the claim names.
//     RBAC cannot say it, since status is one subresource and the hub writes conditions there.
//     OCM lets whoever may update the status write them.
//   - Creating a FederatedLearning, or changing its spec, makes the hub act for the writer
//     (federatedlearning.go), so the writer needs what the hub will do: create on
//     managedclustersets/bind for every set in spec.client.placement.clusterSets (as for a
//     ManagedClusterSetBinding), create on placements in the FederatedLearning's namespace
//     (the hub's Placement carries the spec's tolerations), create on deployments (framework
//     flower) or jobs (openfl, other) there, where the hub starts the server with the writer's
//     image, for openfl and other create on services (the listener's NodePort or LoadBalancer)
//     and persistentvolumeclaims (the model's claim), and use on federatedlearnings/hostpath,
//     which only an administrator grants, for HostPath storage (a hub node's directory in the
//     server's pod), and create on manifestworkreplicasets there, since the hub runs the
//     client image on the clusters bound to that namespace. OCM's controller binds and runs
//     whatever the FederatedLearning says. The hub holds managedclustersets/bind itself (its own
//     bindings pass through this webhook too), which is why the writer is asked first.
//   - A ManagedCluster's failover.flotilla.io/* annotations (the fencing timing, epoch and
//     lost-at its agent acts on) may be added, changed or removed by the hub only
//     (hubannotations.go): its user name, which it learns at start with a SelfSubjectReview.
//     Administrators and agents are refused too; a FailoverPolicy is how the timing changes.
//   - A ManifestWork (ReviewManifestWork, in work.go) must hold at most 500 KiB of manifests, each
//     a whole object with apiVersion, kind and metadata.name, none twice, and manifestConfigs that
//     name its manifests; a work with an executor needs execute-as on manifestworks named
//     system:serviceaccount:<namespace>:<name> in the work's namespace, as in OCM.
//
// The hub also serves the conversion webhook of the add-on CRDs (conversion.go, at
// ConversionPath): the API server sends it ConversionReviews to turn ClusterManagementAddOns,
// ManagedClusterAddOns and AddOnDeploymentConfigs between v1alpha1, which it stores, and v1beta1
// (package addonconversion). The CRDs are installed with a placeholder address
// (config/crd.ConversionPlaceholderURL); the leader writes its own address and authority into
// their spec.conversion.webhook.clientConfig and keeps them there, as it keeps the
// configuration below (conversion_registrar.go). Until a hub leads, requests at v1beta1 fail and
// requests at v1alpha1 work.
//
// The permissions are asked of the API server by SubjectAccessReviews made as the requesting user
// (name, groups, uid and extra from the admission request), so they are granted with ordinary
// RBAC roles. The decisions (ReviewManagedCluster, ReviewBinding, ReviewManifestWork,
// ReviewFederatedLearning) are functions of the old and new
// objects, the user and an Authorizer; the HTTP and TLS plumbing, and the
// ValidatingWebhookConfiguration that points the API server at the hub, are around them.
//
// The hub serves the webhook beside the API server, on a loopback address by default, so the
// configuration uses a URL rather than a Service. Unless given a certificate directory the hub
// makes a certificate authority and a serving certificate in memory at every start.
//
// Every replica serves the webhook, but the ValidatingWebhookConfiguration flotilla-hub belongs to
// the leader (registrar): it writes its own address and authority there when it becomes leader,
// once its server answers, and while it leads it puts the configuration back whenever someone
// changes or deletes it (a watch, and a check every 30 s). A replica that starts or stands by
// leaves it alone.
//
// The configuration outlives the hub. Its failure policy is Fail: while no hub runs, writes to
// ManagedClusters and ManagedClusterSetBindings, creates and spec changes of ManifestWorks and
// FederatedLearnings, and status writes that change a ManagedCluster's status.clusterClaims are
// refused rather than let through unchecked; when the leader stops they are refused until the
// next leader has written its address (at most a lease duration). The API server does not call
// the hub for a ManifestWork or FederatedLearning update that leaves spec alone, nor for a
// ManagedCluster status write that leaves clusterClaims alone (match conditions), so finalizers,
// the controllers' status, and the agents' and the hub's conditions, capacity and leases go
// through without a hub. The consequence for claims: while no hub answers, an agent's status
// write that carries a changed claim is refused whole (its conditions with it), and the agent
// tries again until a hub answers. A claim change waits for the
// hub, which is the only one to act on it. To write without a hub, delete
// ValidatingWebhookConfiguration flotilla-hub; the next leader writes it again. A hub run without
// the webhook (address "" or "0") neither serves nor writes it, and then enforces none of this.
package webhook
