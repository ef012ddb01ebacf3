package policyframework

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/builtin"
)

// A report the hub refuses (here a Conflict) is tried again on the next pass, and the cluster's
// evaluation of a new generation still counts as news then: the copy's history gets its entry
// even though the message did not change (a rollout waits for that entry).
func TestRefusedReportKeepsTheNews(t *testing.T) {
	ctx := context.Background()
	const msg = "Compliant; notification - configmaps [x] found as specified in namespace c1"
	old := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	copyOf := policy("gov.p", "enforce", `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"cp1"},"spec":{}}`)
	copyOf.Labels = map[string]string{policyv1.RootPolicyLabel: "gov.p"}
	copyOf.Status = policyv1.PolicyStatus{ComplianceState: policyv1.Compliant, Details: []*policyv1.DetailsPerTemplate{{
		TemplateMeta: metav1.ObjectMeta{Name: "cp1"}, ComplianceState: policyv1.Compliant,
		History: []policyv1.ComplianceHistory{{LastTimestamp: old, Message: msg, EventName: "gov.p.1"}}}}}
	ts := templates(copyOf, "c1", map[string]string{})
	cp := ts[0].object
	cp.Generation = 2 // the cluster evaluated generation 2; generation 1 was reported
	cp.Status = policyv1.ConfigurationPolicyStatus{ComplianceState: policyv1.ConfigComplianceState(policyv1.Compliant), LastEvaluatedGeneration: 2,
		CompliancyDetails: []policyv1.TemplateStatus{{Conditions: []policyv1.Condition{{Type: "notification", Message: "configmaps [x] found as specified in namespace c1"}}}}}

	refused := false
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(copyOf).WithStatusSubresource(&policyv1.Policy{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if !refused {
				refused = true
				return apierrors.NewConflict(schema.GroupResource{Group: policyv1.GroupVersion.Group, Resource: "policies"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	spoke := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cp).WithStatusSubresource(&policyv1.ConfigurationPolicy{}).Build()
	s := &syncer{env: builtin.Env{ClusterName: "c1", Clock: clocktesting.NewFakeClock(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)), Log: logr.Discard()},
		hub: hub, spoke: spoke, reported: map[string]int64{"gov.p/cp1": 1},
		namespaceMade: true, changed: make(chan struct{}, 1)}
	s.policies, s.configPolicies = builtin.MirrorOf(&s.own, copyOf.DeepCopy()), builtin.MirrorOf(&s.own, cp.DeepCopy())
	if err := s.sync(ctx); err == nil || !refused {
		t.Fatalf("the first pass's report was not refused (err %v)", err)
	}
	if err := s.sync(ctx); err != nil {
		t.Fatalf("the second pass: %v", err)
	}
	got := &policyv1.Policy{}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(copyOf), got); err != nil {
		t.Fatal(err)
	}
	if h := got.Status.Details[0].History; len(h) != 2 || h[0].Message != msg || !h[0].LastTimestamp.After(old.Time) {
		t.Errorf("the copy's history after the refused report was tried again: %+v; want a new entry of generation 2's evaluation first", h)
	}
}
