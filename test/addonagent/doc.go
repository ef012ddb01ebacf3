// Package addonagent tests the add-on agent (internal/agent/addon) and the hub's approval of
// add-on certificates (internal/hub/addonregistration) with a real hub and two spokes, each
// with its registration and add-on agents: a registration gets its hub kubeconfig Secret, whose
// identity can do what RBAC grants it in its cluster's namespace and nothing in another's; a
// request for another cluster's add-on identity is not approved; rotation keeps a working
// kubeconfig; and an add-on's Lease drives its Available condition.
package addonagent
