// Package configpolicy is the built-in add-on config-policy-controller (OCM's name): it installs
// the ConfigurationPolicy CRD on the cluster and evaluates every ConfigurationPolicy there, as
// OCM's config-policy-controller does, writing the result in the policy's status
// (compliant, compliancyDetails with OCM's reasons and messages, relatedObjects).
//
// Each object template names a kind and the fields that matter (match.go): musthave wants an
// object with those fields (lists matched item by item), mustonlyhave exactly those (lists
// whole), mustnothave no such object; labels and annotations follow metadataComplianceType. A
// named template checks that object; an unnamed one every object of the kind (objectSelector).
// Namespaced kinds are checked in the template's namespace or in those namespaceSelector picks
// (include and exclude globs, labels). Under remediationAction enforce the add-on creates,
// updates (merge) or deletes to comply; objects it created are marked createdByPolicy, which
// pruneObjectBehavior DeleteIfCreated deletes with the policy (DeleteAll: every object the policy
// had), through the finalizer PruneFinalizer.
//
// A policy is evaluated when it changes and again after its evaluationInterval (compliant or
// noncompliant). With "watch" or no interval (the default) it is evaluated when an object of a
// kind it checks changes: the add-on watches those kinds by metadata only (watch.go), at most
// once per MinWatchGap per policy, so drift is found and put right when it happens; every
// Resync (30 s) is the safety net. The status is written only when more than its evaluation
// time changed.
//
// The add-on acts with the agent's identity on the cluster: enforce can do what the agent can.
// Not evaluated yet: object-templates-raw and Go templates ({{ ... }}), which are reported as a
// violation naming the field rather than ignored.
package configpolicy
