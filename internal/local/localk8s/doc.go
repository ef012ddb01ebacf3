// Package localk8s runs real Kubernetes control planes as local processes: etcd, kube-apiserver,
// kube-controller-manager and, for clusters that run workloads, kube-scheduler and kwok (simulated
// kubelets). The binaries are the real ones, built from Kubernetes' own Go modules by
// tools/build.sh into a cache outside the checkout. StartKueue adds Kueue's manager (built by
// tools/build-kueue.sh) to a cluster, with its CRDs and its webhooks on loopback.
//
// Two ideas carry the package:
//
//   - A Cluster is one API server with its own CA, serving certificate, service-account keys and
//     admin kubeconfig, plus the controllers a real cluster has. Clusters of one Fleet share one
//     etcd, each under its own --etcd-prefix (measured in bench/README.md: it saves a process and
//     about 40 MiB per cluster and starts as fast as one etcd per cluster).
//   - Every process is owned by a Process value that writes its output to a log file, notices when
//     it exits, and is stopped with SIGTERM and then SIGKILL after a grace period. API servers stop
//     before etcd. Errors carry the tail of the failing process's log.
//
// Processes started for tests die with the test binary (Linux parent-death signal); processes of a
// detached fleet (flotilla dev up) outlive the command that started them and are found again
// through the fleet's state file.
package localk8s
