// Package wellknown holds the names that the hub and the agents must agree on and that belong to
// neither side: the hub never imports agent code and the agent never imports hub code, so a
// name both use lives here, once.
package wellknown
