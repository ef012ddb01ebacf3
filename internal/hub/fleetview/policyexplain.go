package fleetview

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// PolicyExplanation is how one cluster stands with a root policy, from the hub's copy of the
// policy for the cluster: each template's compliance and latest message, and the objects it found
// not as specified or missing, with their differences field by field when the cluster recorded
// them. `flotilla explain policy` prints it; the dashboard draws it.
type PolicyExplanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Cluster   string `json:"cluster"`
	// Compliant is the copy's compliance, "" before the cluster reports.
	Compliant string                `json:"compliant,omitempty"`
	Templates []TemplateExplanation `json:"templates"`
}

// TemplateExplanation is one policy template on the cluster.
type TemplateExplanation struct {
	Name      string `json:"name"`
	Compliant string `json:"compliant,omitempty"`
	// Message is the latest compliance message, at MessageTime.
	Message     string              `json:"message,omitempty"`
	MessageTime *metav1.Time        `json:"messageTime,omitempty"`
	Objects     []ObjectExplanation `json:"objects"`
}

// ObjectExplanation is one object a template found not as specified, or missing.
type ObjectExplanation struct {
	// Object is "Kind namespace/name", or "Kind name" for a cluster-scoped object.
	Object    string `json:"object"`
	Compliant string `json:"compliant,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Missing: the cluster has no such object.
	Missing bool `json:"missing,omitempty"`
	// Diff are the differences, a line per field ("data.region is us-east, want eu-west"); empty
	// when none were recorded (recordDiff None or Log, or a Secret).
	Diff []string `json:"diff,omitempty"`
}

// IsHubCopy says whether p is the hub's copy of a root policy for cluster (its labels say so;
// a Policy someone else made under that name is not).
func IsHubCopy(p *policyv1.Policy, cluster string) bool {
	return p.IsReplicated() && p.Labels[policyv1.ClusterNameLabel] == cluster
}

// ExplainPolicy explains copy, the hub's copy of ns/name for cluster.
func ExplainPolicy(ns, name, cluster string, copy *policyv1.Policy) PolicyExplanation {
	out := PolicyExplanation{Namespace: ns, Name: name, Cluster: cluster, Compliant: string(copy.Status.ComplianceState), Templates: []TemplateExplanation{}}
	for _, d := range copy.Status.Details {
		if d == nil {
			continue
		}
		t := TemplateExplanation{Name: d.TemplateMeta.Name, Compliant: string(d.ComplianceState), Objects: []ObjectExplanation{}}
		if len(d.History) > 0 {
			t.Message, t.MessageTime = d.History[0].Message, d.History[0].LastTimestamp.DeepCopy()
		}
		for _, r := range d.RelatedObjects {
			o := ObjectExplanation{Object: r.Object.Kind + " " + r.Object.Metadata.Name, Compliant: r.Compliant, Reason: r.Reason}
			if r.Object.Metadata.Namespace != "" {
				o.Object = r.Object.Kind + " " + r.Object.Metadata.Namespace + "/" + r.Object.Metadata.Name
			}
			switch {
			case r.Properties != nil && r.Properties.Diff != "":
				o.Diff = strings.Split(r.Properties.Diff, "\n")
			case r.Properties == nil || r.Properties.UID == "":
				o.Missing = true
			}
			t.Objects = append(t.Objects, o)
		}
		out.Templates = append(out.Templates, t)
	}
	return out
}
