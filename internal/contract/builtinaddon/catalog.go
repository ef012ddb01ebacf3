package builtinaddon

import addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"

// Label marks what Flotilla made for a built-in add-on (its ClusterManagementAddOn on the hub,
// the objects the add-on writes); its value is the add-on's name. Flotilla updates and deletes
// only objects that carry it.
const Label = "addon.flotilla.io/built-in"

// Info describes a built-in add-on.
type Info struct {
	Name, DisplayName, Description string
	// Configs are the ClusterManagementAddOn's spec.supportedConfigs: a built-in add-on that is an
	// AddOnTemplate (FlowerAddon) names its template and AddOnDeploymentConfig there.
	Configs []addonv1alpha1.ConfigMeta
}

// ResourceUsage writes OCM's AddOnPlacementScore resource-usage-score.
var ResourceUsage = Info{
	Name:        "resource-usage",
	DisplayName: "Resource usage scores",
	Description: "Built into flotilla agent: writes OCM's AddOnPlacementScore resource-usage-score (free CPU, memory, " +
		"GPUs and TPUs of the cluster and of its best node) in the cluster's namespace, for placements to rank clusters by.",
}

// DynamicScoring runs the scorers of OCM contrib's dynamic scoring (DynamicScorer) on the cluster.
var DynamicScoring = Info{
	Name:        "dynamic-scoring",
	DisplayName: "Dynamic scoring",
	Description: "Built into flotilla agent: runs the active DynamicScorers (Prometheus range query, then the scorer's " +
		"scoring API) and writes their scores as AddOnPlacementScores in the cluster's namespace, for placements to rank clusters by.",
}

// MultiKueueWorker reports a MultiKueue token of the worker; the hub switches it on for the
// clusters of its MultiKueueConfigs (internal/hub/kueue).
var MultiKueueWorker = Info{
	Name:        "multikueue-worker",
	DisplayName: "MultiKueue worker credentials",
	Description: "Built into flotilla agent: requests tokens of the least-privilege ServiceAccount the hub delivers for " +
		"Kueue's MultiKueue and reports them to the hub, which composes the worker's kubeconfig. The hub switches it on " +
		"for the clusters its Kueue admission checks choose.",
}

// KueueQueues keeps Kueue's ResourceFlavors, ClusterQueue and LocalQueue on the cluster from its
// nodes (internal/agent/builtin/kueuequeues).
var KueueQueues = Info{
	Name:        "kueue-queues",
	DisplayName: "Kueue queues",
	Description: "Built into flotilla agent: keeps Kueue's configuration on the cluster current from its nodes: a " +
		"ResourceFlavor per GPU model and cpu-only, the ClusterQueue cluster-queue with the nodes' allocatable as quotas, " +
		"and the LocalQueue default/user-queue. Needs Kueue installed on the cluster.",
}

// Flower add-on: names the hub (internal/hub/flower) and users share. The add-on's agent is an
// AddOnTemplate the hub keeps, not code of flotilla agent.
const (
	// FlowerNamespace is the hub's namespace of the SuperLink, its certificates and the add-on's
	// default AddOnDeploymentConfig (OCM's flower-addon uses it for the SuperLink too).
	FlowerNamespace = "flower-system"
	// FlowerTemplate is the AddOnTemplate, FlowerDeploymentConfig the AddOnDeploymentConfig in
	// FlowerNamespace, that the hub keeps and the ClusterManagementAddOn names as defaults.
	FlowerTemplate         = "flower-addon"
	FlowerDeploymentConfig = "flower-addon"
)

// FlowerAddon deploys a Flower SuperNode on the cluster, connected to the SuperLink the hub runs,
// as OCM addon-contrib's flower-addon does (used by OCM's FederatedLearning).
var FlowerAddon = Info{
	Name:        "flower-addon",
	DisplayName: "Flower federated learning",
	Description: "Flower SuperNode on the cluster (namespace flower-addon), connected over TLS to the SuperLink the hub " +
		"runs in " + FlowerNamespace + ". An AddOnTemplate the hub keeps; the hub runs the SuperLink while the add-on is enabled on a cluster.",
	Configs: []addonv1alpha1.ConfigMeta{
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"},
			DefaultConfig: &addonv1alpha1.ConfigReferent{Name: FlowerTemplate}},
		{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addondeploymentconfigs"},
			DefaultConfig: &addonv1alpha1.ConfigReferent{Namespace: FlowerNamespace, Name: FlowerDeploymentConfig}},
	},
}

// ManagedServiceAccount serves OCM's ManagedServiceAccounts on the cluster
// (internal/agent/builtin/managedserviceaccount), under OCM's add-on name.
var ManagedServiceAccount = Info{
	Name:        "managed-serviceaccount",
	DisplayName: "Managed ServiceAccounts",
	Description: "Built into flotilla agent: for each ManagedServiceAccount in the cluster's namespace, makes the ServiceAccount " +
		"in open-cluster-management-agent-addon on the cluster and keeps a rotated token of it in the Secret of the same name " +
		"on the hub (OCM's managed-serviceaccount). The ServiceAccount gets no rights: grant them with a ManifestWork.",
}

// GovernancePolicyFramework delivers the cluster's replicated policies and reports their
// compliance, as OCM's add-on of that name.
var GovernancePolicyFramework = Info{
	Name:        "governance-policy-framework",
	DisplayName: "Governance policy framework",
	Description: "Built into flotilla agent: puts the ConfigurationPolicy templates of the policies the hub replicates into " +
		"the cluster's namespace on the cluster, and reports each policy's compliance, per template with its history, " +
		"in the replicated policy's status on the hub (OCM's governance-policy-framework).",
}

// ConfigPolicyController evaluates the cluster's ConfigurationPolicies, as OCM's add-on of that
// name.
var ConfigPolicyController = Info{
	Name:        "config-policy-controller",
	DisplayName: "Configuration policy controller",
	Description: "Built into flotilla agent: evaluates the ConfigurationPolicies on the cluster (musthave, mustonlyhave, " +
		"mustnothave; inform or enforce) and writes their compliance in their status (OCM's config-policy-controller).",
}

// Catalog is every built-in add-on.
var Catalog = []Info{ResourceUsage, DynamicScoring, MultiKueueWorker, KueueQueues, FlowerAddon, ManagedServiceAccount,
	GovernancePolicyFramework, ConfigPolicyController}

// ScoreConflictCondition is the condition of the ManagedClusterAddOn resource-usage that says
// another writer writes AddOnPlacementScore resource-usage-score in the cluster's namespace, and
// that Flotilla therefore does not (True); False once that is over.
const ScoreConflictCondition = "ScoreConflict"

// ResourceUsageCollect is OCM's add-on (addon-contrib) that writes AddOnPlacementScore
// resource-usage-score from the spoke, as ResourceUsage's hub side does.
const ResourceUsageCollect = "resource-usage-collect"
