package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func runExplainPolicy(objs []client.Object, args ...string) (string, error) {
	return runExplainOf("policy", objs, args...)
}

func TestExplainPolicy(t *testing.T) {
	replicated := func(cluster string) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "gov.residency", Labels: map[string]string{
			policyv1.RootPolicyLabel: "gov.residency", policyv1.ClusterNameLabel: cluster, policyv1.ClusterNamespaceLabel: cluster}}}
	}
	west := replicated("gpu-west")
	west.Status = policyv1.PolicyStatus{ComplianceState: policyv1.NonCompliant, Details: []*policyv1.DetailsPerTemplate{{
		TemplateMeta: metav1.ObjectMeta{Name: "region"}, ComplianceState: policyv1.NonCompliant,
		History: []policyv1.ComplianceHistory{{LastTimestamp: metav1.NewTime(now.Add(-3 * time.Minute)),
			Message: "NonCompliant; violation - configmaps [region] found but not as specified in namespace kube-public"}},
		RelatedObjects: []policyv1.RelatedObject{
			{Object: policyv1.ObjectResource{Kind: "ConfigMap", Metadata: policyv1.ObjectMetadata{Namespace: "kube-public", Name: "region"}},
				Compliant: "NonCompliant", Reason: "Resource found but does not match", Properties: &policyv1.ObjectProperties{UID: "u1",
					Diff: "data.region is us-east, want eu-west\ndata.zone is unset, want a"}},
			{Object: policyv1.ObjectResource{Kind: "Namespace", Metadata: policyv1.ObjectMetadata{Name: "residency"}},
				Compliant: "NonCompliant", Reason: "Resource not found but should exist"},
		}}}}
	handMade := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "gov.residency"}}
	objs := []client.Object{west, handMade}

	out, err := runExplainPolicy(objs, "gov/residency", "--cluster", "gpu-west")
	if err != nil {
		t.Fatal(err)
	}
	want := lines(
		"Policy gov/residency on cluster gpu-west: NonCompliant",
		"",
		"Template region: NonCompliant",
		"  NonCompliant; violation - configmaps [region] found but not as specified in namespace kube-public (3m ago)",
		"  ConfigMap kube-public/region: NonCompliant (Resource found but does not match)",
		"    data.region is us-east, want eu-west",
		"    data.zone is unset, want a",
		"  Namespace residency: NonCompliant (Resource not found but should exist)",
		"    the cluster has no such object",
	)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no cluster":           {args: []string{"gov/residency"}, want: "--cluster is required"},
		"not placed there":     {args: []string{"gov/residency", "--cluster", "edge-1"}, want: "cluster edge-1 has no copy of Policy gov/residency"},
		"not the hub's copy":   {args: []string{"gov/residency", "--cluster", "gpu-east"}, want: "is not the hub's copy"},
		"two slashes in names": {args: []string{"a/b/c", "--cluster", "gpu-west"}, want: "policy"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := runExplainPolicy(objs, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
