// Package agent assembles `flotilla agent`, the agent that runs on each managed cluster, as
// internal/hub assembles the hub: Options (with DefaultOptions, the command's defaults) configure
// an Agent, New builds its parts and Run runs them together until its context ends.
//
// It owns the assembly and nothing else: the parts are packages of their own. The registration
// agent (internal/agent/registration) joins the cluster to the hub, keeps its hub credentials and
// renews its lease; the fence (internal/agent/fence) stops the fenced workloads while the lease
// cannot be renewed, as one more loop on the registration agent's runner (internal/agent/loop);
// the work agent (internal/agent/work) applies the cluster's ManifestWorks; the add-on agent
// (internal/agent/addon) gives add-ons their hub credentials, reports their health and runs the
// built-in add-ons (internal/agent/builtin/...). All act on the hub with the credentials the
// registration agent keeps, and all stop when one stops or the context ends.
//
// The agent's client rate (Options.QPS and Burst, the command's --kube-api-qps and
// --kube-api-burst) is named once, registration.DefaultQPS and DefaultBurst, and handed to the
// work and add-on agents. The command (internal/cli/agent) only turns flags into Options: it
// finds the bootstrap kubeconfig (a file, or what `flotilla join` stored on the cluster) and
// refuses input that cannot work, naming the flag.
package agent
