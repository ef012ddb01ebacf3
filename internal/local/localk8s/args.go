package localk8s

import (
	"path/filepath"
	"strconv"
)

// ServiceCIDR is the service IP range of every local cluster.
const ServiceCIDR = "10.96.0.0/16"

// KubernetesServiceIP is the ClusterIP of the kubernetes Service (the first of ServiceCIDR).
const KubernetesServiceIP = "10.96.0.1"

func apiServerArgs(opts ClusterOptions, port int) []string {
	f := func(name string) string { return filepath.Join(opts.Dir, name) }
	args := []string{
		"--etcd-servers=" + opts.EtcdURL,
		"--etcd-prefix=/" + opts.Name,
		"--bind-address=" + opts.address(),
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + f(servingCertFile),
		"--tls-private-key-file=" + f(servingKeyFile),
		"--client-ca-file=" + f(caCertFile),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + f(saPubFile),
		"--service-account-signing-key-file=" + f(saKeyFile),
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--allow-privileged=true",
		// Logs, exec and port-forward reach a real node's kubelet with this identity.
		"--kubelet-client-certificate=" + f(kubeletClientCertFile),
		"--kubelet-client-key=" + f(kubeletClientKeyFile),
		// A node's name does not resolve here; its InternalIP (--node-ip) is reachable.
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--profiling=" + strconv.FormatBool(opts.Profiling),
		"--v=1",
	}
	if opts.address() == defaultAddress {
		// The API server's own Service endpoint would be 127.0.0.1, which EndpointSlice validation
		// refuses; nothing in a loopback cluster reaches the API server through that Service.
		return append(args, "--endpoint-reconciler-type=none")
	}
	// A cluster with a real node: pods reach the API server through the kubernetes Service, whose
	// endpoint is the address it serves at, and the API server calls webhooks and aggregated APIs
	// at their pods' IPs (its host routes each node's pod range to the node), as kube-proxy's rules
	// live in the nodes' network namespaces, not beside the API server.
	return append(args,
		"--advertise-address="+opts.address(),
		"--endpoint-reconciler-type=lease",
		"--enable-aggregator-routing=true",
	)
}

func controllerManagerArgs(opts ClusterOptions, kubeconfig string) []string {
	f := func(name string) string { return filepath.Join(opts.Dir, name) }
	return append(controllerArgs(kubeconfig),
		"--cluster-name="+opts.Name,
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+f(saKeyFile),
		"--root-ca-file="+f(caCertFile),
		// Signs approved CertificateSigningRequests with the cluster CA, the one the API server
		// trusts for client certificates: registration agents get their hub credentials this way.
		"--cluster-signing-cert-file="+f(caCertFile),
		"--cluster-signing-key-file="+f(caKeyFile),
		"--service-cluster-ip-range="+ServiceCIDR,
	)
}

func schedulerArgs(kubeconfig string) []string { return controllerArgs(kubeconfig) }

// controllerArgs are the flags kube-controller-manager and kube-scheduler share: one identity for
// the API and for delegated authentication, no serving port (nothing scrapes them locally), and no
// leader election (one instance).
func controllerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--v=1",
	}
}

// KwokNodeAnnotation marks the nodes kwok simulates; nodes without it are left alone.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

func kwokArgs(kubeconfig, stages string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
		"--node-ip=10.0.0.1",
		// kwok serves node metrics and logs; keep it on loopback like everything else.
		"--server-address=127.0.0.1:0",
	}
}
