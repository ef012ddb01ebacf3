package policy

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// complianceGauge is OCM's policy_governance_info: 0 compliant, 1 non-compliant, -1 pending or
// unknown, per root policy (cluster_namespace "<null>", as OCM writes it) and per cluster's copy.
var complianceGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "policy_governance_info",
	Help: "The compliance status of the named policy. 0 == Compliant. 1 == NonCompliant. -1 == Unknown/Pending",
}, []string{"type", "policy", "policy_namespace", "cluster_namespace"})

func init() { metrics.Registry.MustRegister(complianceGauge) }

// rootSentinel is OCM's cluster_namespace of a root policy's series.
const rootSentinel = "<null>"

func gaugeValue(s policyv1.ComplianceState) float64 {
	switch s {
	case policyv1.Compliant:
		return 0
	case policyv1.NonCompliant:
		return 1
	}
	return -1
}

// series remembers which clusters' series each root has, so that a cluster no longer placed
// loses its series without a scan of every series.
type series struct {
	mu       sync.Mutex
	clusters map[types.NamespacedName]map[string]bool
}

// record sets root's series and its placed clusters' and drops those of clusters no longer
// placed; a disabled or deleted root (st nil) has none.
func (s *series) record(root types.NamespacedName, st *policyv1.PolicyStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clusters == nil {
		s.clusters = map[types.NamespacedName]map[string]bool{}
	}
	now := map[string]bool{}
	if st != nil {
		complianceGauge.WithLabelValues("root", root.Name, root.Namespace, rootSentinel).Set(gaugeValue(st.ComplianceState))
		for _, c := range st.Status {
			now[c.ClusterNamespace] = true
			complianceGauge.WithLabelValues("propagated", root.Name, root.Namespace, c.ClusterNamespace).Set(gaugeValue(c.ComplianceState))
		}
	} else {
		complianceGauge.DeleteLabelValues("root", root.Name, root.Namespace, rootSentinel)
	}
	for c := range s.clusters[root] {
		if !now[c] {
			complianceGauge.DeleteLabelValues("propagated", root.Name, root.Namespace, c)
		}
	}
	if len(now) == 0 {
		delete(s.clusters, root)
	} else {
		s.clusters[root] = now
	}
}
