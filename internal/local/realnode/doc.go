// Package realnode runs a real Kubernetes node for a cluster of the local fleet: a kubelet,
// kube-proxy, CoreDNS and a containerd (Debian's, with runc) in a network namespace of their
// own, a CNI bridge for the node's pods, and images imported from files (ImportImage), as `kind
// load image-archive` does. Containers really start; nothing is pulled from a registry.
//
// A node is what kind gives each node as a container, made from the kernel's parts instead:
//
//   - Network. The node's network namespace (flotilla-rn<N>, which is also the lock on N) is
//     linked to the host by a veth pair: the host's end is 10.250.N.1, the node's 10.250.N.2, and
//     the node's pods get 10.251.N.0/24 on a bridge inside the namespace. The cluster's API server
//     binds the host's end (localk8s.ClusterOptions.Address), which the kubelet and the pods reach
//     through their default route; the host routes 10.251.N.0/24 to the node, so the API server
//     reaches webhooks at their pods' IPs. Each node's FLOTILLA-ISOLATION chain drops what its pods
//     send to another node or another node's pods (the host's addresses, where every cluster's
//     API server serves, stay reachable), so nodes of different clusters do not see each other's
//     pods even on a machine that forwards IPv4. kube-proxy's rules live in the node's namespace.
//   - DNS. Each node runs CoreDNS as its cluster's DNS, answering on the node's address
//     (10.250.N.2:53, udp and tcp) for cluster.local and the reverse zones, from its own
//     cluster's API server only, and forwarding nothing (coreDNSConfig): a pod resolves its own
//     cluster's Services and no other cluster's. The kubelet's clusterDNS is that address, so pods
//     with dnsPolicy ClusterFirst get it and the search path <namespace>.svc.cluster.local
//     svc.cluster.local cluster.local. CoreDNS reads its cluster as user system:coredns, bound
//     to ClusterRole flotilla:coredns: list and watch Services, Namespaces and EndpointSlices,
//     which is kubeadm's system:coredns without pods (no `pods verified`). Its binary is built
//     from CoreDNS's module with only the plugins the Corefile uses (tools/build-coredns.sh);
//     callers pass it as Options.CoreDNS (FindCoreDNS finds it as localk8s.FindBinaries finds
//     Kubernetes'), and Start refuses to run a node without it. Start returns once CoreDNS
//     answers for the kubernetes Service.
//   - Processes and cgroups. The node's programs enter its network namespace only (nsenter --net,
//     not ip netns exec, whose private mount namespace would hide the kubelet's volume mounts
//     from containerd). They run in cgroup /flotilla-rn<N> of every
//     v1 hierarchy (the kubelet's cgroupRoot), and containerd's shims and every container inherit
//     it: tearing a node down kills exactly the processes in that tree, which this package
//     started (CoreDNS among them), and removes the tree.
//   - Files and mounts. containerd's root and the kubelet's root live in the node's folder,
//     containerd's state (and the pods' network namespaces, netns_mounts_under_state_dir) in
//     /run/flotilla-rn<N>; teardown unmounts everything under both.
//
// Teardown works from the index N and the folder alone, so a detached fleet (flotilla dev up) is
// torn down by a later command. Running a node needs root, containerd and runc, the CNI plugins
// in /usr/lib/cni and iproute2 (Check says which is missing), and the CoreDNS binary
// (CheckCoreDNS).
package realnode
