package get

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func makePolicy(ns, name string, action policyv1.RemediationAction, state policyv1.ComplianceState, age time.Duration, clusters map[string]policyv1.ComplianceState) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(age)},
		Spec: policyv1.PolicySpec{RemediationAction: action}, Status: policyv1.PolicyStatus{ComplianceState: state}}
	for _, c := range []string{"edge-1", "gpu-east", "gpu-north", "gpu-south", "gpu-west"} {
		if s, ok := clusters[c]; ok {
			p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: s})
		}
	}
	return p
}

func TestGetPolicies(t *testing.T) {
	nc, c := policyv1.NonCompliant, policyv1.Compliant
	replica := makePolicy("gpu-west", contextNamespace+".netpol", "enforce", nc, time.Hour, nil)
	replica.Labels = map[string]string{policyv1.RootPolicyLabel: contextNamespace + ".netpol"}
	off := makePolicy(contextNamespace, "old", "inform", "", day, nil)
	off.Spec.Disabled = true
	objs := []client.Object{
		makePolicy(contextNamespace, "netpol", "Enforce", nc, 2*day, map[string]policyv1.ComplianceState{
			"edge-1": nc, "gpu-east": c, "gpu-north": nc, "gpu-south": nc, "gpu-west": nc}),
		makePolicy(contextNamespace, "limits", "inform", c, 3*time.Minute, map[string]policyv1.ComplianceState{"gpu-east": c, "gpu-west": c}),
		off, replica,
	}
	cases := map[string]struct {
		args    []string
		wantOut string
	}{
		"root policies, with the clusters that do not comply": {
			args: []string{"policies"},
			wantOut: lines(
				"NAME     REMEDIATION   COMPLIANCE     CLUSTERS   NONCOMPLIANT                    AGE",
				"limits   inform        Compliant      2/2        -                               3m",
				"netpol   enforce       NonCompliant   1/5        edge-1,gpu-north,gpu-south +1   2d",
				"old      inform        Disabled       0/0        -                               24h",
			),
		},
		"a cluster's copies, by its short name": {
			args: []string{"plc", "-c", "gpu-west"},
			wantOut: lines(
				"NAME              REMEDIATION   COMPLIANCE     CLUSTERS   NONCOMPLIANT   AGE",
				"research.netpol   enforce       NonCompliant   -          -              60m",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, objs...)
			out, _, err := runGet(newClient, tc.args...)
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}
