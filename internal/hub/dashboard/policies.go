package dashboard

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// PolicyRow is one root policy and each placed cluster's compliance with it: a row of the
// policies view's policy × cluster grid.
type PolicyRow struct {
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Remediation string `json:"remediation,omitempty"`
	// Compliant is the root's: Compliant, NonCompliant, Pending, or "" while a cluster is silent.
	Compliant string       `json:"compliant,omitempty"`
	Disabled  bool         `json:"disabled,omitempty"`
	Clusters  []PolicyCell `json:"clusters"`
}

// PolicyCell is one cluster's compliance with a policy ("" before it reports).
type PolicyCell struct {
	Cluster   string `json:"cluster"`
	Compliant string `json:"compliant,omitempty"`
}

// policies is a page of root policies, by namespace and name, with their clusters' compliance.
func (s *Server) policies(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	opts, where := listOptions(q)
	var list policyv1.PolicyList
	if err := c.List(ctx(r), &list, append(opts, client.MatchingLabelsSelector{Selector: policyv1.RootSelector()})...); err != nil {
		writeError(w, hubError(err, "listing policies "+where))
		return
	}
	rows := make([]PolicyRow, 0, len(list.Items))
	for i := range list.Items {
		rows = append(rows, policyRow(&list.Items[i]))
	}
	listAnswer(w, Page[PolicyRow]{Items: rows, Continue: list.Continue, Remaining: list.RemainingItemCount}, nil)
}

func policyRow(p *policyv1.Policy) PolicyRow {
	row := PolicyRow{Namespace: p.Namespace, Name: p.Name, Remediation: strings.ToLower(string(p.Spec.RemediationAction)),
		Compliant: string(p.Status.ComplianceState), Disabled: p.Spec.Disabled, Clusters: []PolicyCell{}}
	for _, st := range p.Status.Status {
		row.Clusters = append(row.Clusters, PolicyCell{Cluster: st.ClusterName, Compliant: string(st.ComplianceState)})
	}
	return row
}

// policyOnCluster answers GET /api/policies/{ns}/{name}/clusters/{cluster}: how the cluster stands
// with the root policy (fleetview.ExplainPolicy), from the hub's copy in the cluster's namespace,
// read as the viewer.
func (s *Server) policyOnCluster(w http.ResponseWriter, r *http.Request) {
	ns, name, cluster := r.PathValue("ns"), r.PathValue("name"), r.PathValue("cluster")
	for _, e := range []*apiError{checkName("namespace", ns), checkName("policy", name), checkName("cluster", cluster)} {
		if e != nil {
			writeError(w, e)
			return
		}
	}
	_, c, ok := s.begin(w, r)
	if !ok {
		return
	}
	p := &policyv1.Policy{}
	key := client.ObjectKey{Namespace: cluster, Name: policyv1.ReplicatedName(ns, name)}
	if err := c.Get(ctx(r), key, p); err != nil {
		if apierrors.IsNotFound(err) {
			writeError(w, notFound("cluster %s has no copy of policy %s/%s (no Policy %s/%s on the hub): the policy is not placed there, or not yet", cluster, ns, name, key.Namespace, key.Name))
			return
		}
		writeError(w, hubError(err, "reading the copy of policy "+ns+"/"+name+" for cluster "+cluster))
		return
	}
	if !fleetview.IsHubCopy(p, cluster) {
		writeError(w, notFound("Policy %s/%s is not the hub's copy of %s/%s for cluster %s (it lacks the labels the hub's copies carry)", key.Namespace, key.Name, ns, name, cluster))
		return
	}
	writeJSON(w, http.StatusOK, fleetview.ExplainPolicy(ns, name, cluster, p))
}
