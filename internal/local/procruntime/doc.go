// Package procruntime runs pods' containers as local processes, for local fleets whose nodes are
// simulated (kwok) and run no containers: the rendered Helm charts' Deployments (the Flotilla hub
// and agent, run with their own ServiceAccount identity) and pods that a controller finds bound
// to nodes marked for the runtime.
//
// Runtime.Start does for one container what a kubelet does, with the container's filesystem
// replaced by a folder, Root/<namespace>/<pod>/:
//
//   - Volumes (secret, configMap, emptyDir, downwardAPI, and projected with secret, configMap,
//     downwardAPI and serviceAccountToken sources) are written to volumes/<volume>/, with items,
//     paths and modes; an optional missing object gives an empty volume. The container's mount
//     path P (with subPath) is fs/P, a symbolic link to the volume's folder.
//   - The service-account token is automounted as the API server's admission and the kubelet
//     would (unless automountServiceAccountToken is false on the pod or its ServiceAccount, or
//     the container mounts something at ServiceAccountDir): a TokenRequest for the pod's
//     ServiceAccount, with the CA of Runtime.Server and the namespace, in
//     fs/var/run/secrets/kubernetes.io/serviceaccount. Tokens are renewed at 80% of their
//     lifetime while the process runs. A token is bound to the pod when the pod has a uid.
//   - Env is computed as the kubelet computes it: envFrom, then env (value with $(VAR)
//     expansion, configMapKeyRef, secretKeyRef, fieldRef, resourceFieldRef), then
//     KUBERNETES_SERVICE_HOST/PORT from Runtime.Server.Host. The process gets no other variable
//     of this program, except PATH; HOME is the pod's folder and HOSTNAME the pod's name, as an
//     image and a container runtime would provide, unless the container sets them.
//   - The program is Runtime.Commands[image] (or [repository]); command[0], if set, must name
//     that program (same base name) and is replaced by it; then come command[1:] and args,
//     $(VAR)-expanded. Any argument or env value that is a mount path, or starts with one, whole
//     or after its first '=' (--kubeconfig=/etc/hub/kubeconfig), is rewritten to its place
//     under fs/. The working directory is fs/<workingDir>, else the pod's folder.
//   - Output goes to logs/<container>.log; Running reports the exit code (128+signal when
//     killed) and stops the process with SIGTERM, then SIGKILL. The process dies with this
//     program (parent-death signal), as localk8s's processes do.
//
// The one deviation from a kubelet that a program can see: client-go's in-cluster
// configuration reads fixed absolute paths under /var/run/secrets, which a local process does
// not have. The runtime therefore writes a kubeconfig (server Runtime.Server.Host, the
// rewritten ca.crt and token file, the pod's namespace) to Root/<ns>/<pod>/kubeconfig and sets
// KUBECONFIG to it, unless the container sets KUBECONFIG itself. Programs that load their
// configuration the usual way (--kubeconfig, then $KUBECONFIG, then in-cluster) connect with
// the pod's own service-account identity.
//
// PodRunner is the kubelet of the nodes labeled NodeLabel=true: it runs the pods bound to them
// through a Runtime (init containers first, restarts by restartPolicy with a back-off) and
// writes their status; it confirms a pod's deletion once its processes have stopped. Those nodes
// must not carry kwok's annotation, so that kwok neither simulates them nor writes their pods'
// status.
//
// NodeKeeper keeps such a node alive as a kubelet does, with an injected clock: it registers the
// Node if asked (NodeLabel=true, the hostname, OS and architecture labels, capacity and
// allocatable from this machine, HostCapacity, or given), renews its Lease in kube-node-lease
// every 10 s (40 s lease), writes Ready and the pressure conditions when they change and every
// 5 minutes, and once Ready removes the not-ready and unreachable taints as the node lifecycle
// controller would; when it stops it marks the node NotReady. So kube-scheduler places pods on
// the node by their requests and kube-controller-manager neither taints it nor evicts its pods.
// NodeRunner combines the two for one node (a PodRunner selecting only that node, with its
// NodeKeeper in PodRunner.Keep); StartNode runs it and waits until the node is schedulable. It
// uses the client it is given, in tests the administrator's, not a node identity restricted by
// the Node authorizer as a kubelet's is.
//
// Not enforced, only recorded (Running.Container): the security context (runAsUser,
// runAsNonRoot, readOnlyRootFilesystem, capabilities: the process runs as this program's user
// with a writable folder), resources (no cgroup limits), probes, ports (the process binds this
// machine's loopback or whatever it asks for) and service links other than the API server's.
package procruntime
