// Package agent is `flotilla agent`: registers a managed cluster with the hub and keeps it
// registered (lease, status, certificate rotation), and runs, with the same hub credentials, the
// work agent that applies the cluster's ManifestWorks and the add-on agent that gives add-ons
// their hub credentials and reports their health.
//
// The command only turns its flags into internal/agent.Options (finding the bootstrap kubeconfig
// `flotilla join` stored when none is given, and refusing input that cannot work, naming the
// flag) and runs internal/agent's Agent, which assembles the parts.
package agent
