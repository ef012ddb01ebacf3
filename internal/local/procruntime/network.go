package procruntime

import (
	"context"
	"regexp"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// A pod's processes share this machine's network, without cluster DNS or kube-proxy. So that
// the addresses a chart or a controller renders work as they are, the runtime rewrites them in
// each process's arguments and environment when it starts:
//
//   - "0.0.0.0" as a host (alone, or before ":port") becomes the runtime's Address: a server
//     that listens on every interface of its pod listens on its cluster's own loopback address,
//     so two clusters' servers on the same port do not collide;
//   - "<service>.<namespace>[.svc[.cluster.local]]:<port>" of a Service of this cluster becomes
//     "<Address>:<targetPort>", the way kube-proxy would forward it, on the assumption (true of
//     a local fleet, which has one process-runtime node per cluster) that the Service's pods
//     run on this node. Names of Services that do not exist are left alone.

// hostPort finds host:port tokens in a string.
var hostPort = regexp.MustCompile(`[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}`)

// anyHost finds 0.0.0.0 before a port, not inside another address (10.0.0.0:80).
var anyHost = regexp.MustCompile(`(^|[^0-9.])0\.0\.0\.0:`)

// network rewrites one process's addresses.
type network struct {
	ip       string
	services map[string]string // "name.ns:port" (and .svc, .svc.cluster.local) -> "ip:targetPort"
}

// network reads this cluster's Services; a failed read is logged and leaves Service names as
// they are (the process then fails to resolve them, and restarts).
func (r *Runtime) network(ctx context.Context) *network {
	services, err := ServiceAddresses(ctx, r.Client, r.address())
	if err != nil {
		klog.FromContext(ctx).Error(err, "process runtime: reading Services; their names stay unresolved")
	}
	return &network{ip: r.address(), services: services}
}

// ServiceAddresses maps each Service port of a cluster, by every name cluster DNS gives it
// ("name.ns:port", "name.ns.svc:port", "name.ns.svc.cluster.local:port"), to ip and the port's
// targetPort (its port when the target is named or unset).
func ServiceAddresses(ctx context.Context, c kubernetes.Interface, ip string) (map[string]string, error) {
	l, err := c.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range l.Items {
		for _, p := range s.Spec.Ports {
			target := p.Port
			if p.TargetPort.IntVal > 0 {
				target = p.TargetPort.IntVal
			}
			to := ip + ":" + strconv.Itoa(int(target))
			for _, host := range []string{s.Name + "." + s.Namespace, s.Name + "." + s.Namespace + ".svc", s.Name + "." + s.Namespace + ".svc.cluster.local"} {
				out[host+":"+strconv.Itoa(int(p.Port))] = to
			}
		}
	}
	return out, nil
}

// rewrite turns the addresses in v into local ones.
func (n *network) rewrite(v string) string {
	if v == "0.0.0.0" {
		return n.ip
	}
	v = anyHost.ReplaceAllString(v, "${1}"+n.ip+":")
	if len(n.services) == 0 {
		return v
	}
	return hostPort.ReplaceAllStringFunc(v, func(hp string) string {
		if to, ok := n.services[hp]; ok {
			return to
		}
		return hp
	})
}
