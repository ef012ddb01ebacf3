package v1

// ManifestWorkFinalizer is the work agent's finalizer (OCM's name): it holds a ManifestWork on the
// hub until the agent has removed what the work applied on its cluster. The hub puts the same
// finalizer on the agent's Role and RoleBinding in the cluster's namespace (as OCM does on its work
// agent's RoleBinding), so that the agent keeps the access it needs to remove that finalizer until
// no ManifestWork is left in the namespace.
const ManifestWorkFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
