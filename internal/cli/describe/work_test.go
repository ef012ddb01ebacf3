package describe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestFieldValue(t *testing.T) {
	cases := map[string]struct {
		value workv1.FieldValue
		want  string
	}{
		"integer":                 {value: integer("n", -3).Value, want: "-3"},
		"string with a space":     {value: str("s", "a b").Value, want: `"a b"`},
		"boolean":                 {value: boolean("b", false).Value, want: "false"},
		"json":                    {value: jsonRaw("j", `{"a":1}`).Value, want: `{"a":1}`},
		"type without its field":  {value: workv1.FieldValue{Type: workv1.Integer, String: ptr.To("4")}, want: "<none>"},
		"a type this CLI ignores": {value: workv1.FieldValue{Type: "Quantity"}, want: "<none>"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fieldValue(tc.value)); diff != "" {
				t.Errorf("fieldValue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentify(t *testing.T) {
	jobMeta := &workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ml", Name: "train"}}
	cases := map[string]struct {
		manifest workv1.Manifest
		status   *workv1.ManifestCondition
		want     string
	}{
		"from the manifest, over a stale status": {
			manifest: makeWork("c", "w", 0).Object("apps/v1", "Deployment", "web", "web").Spec.Workload.Manifests[0],
			status:   jobMeta,
			want:     "Deployment web/web (apps/v1)",
		},
		"cluster-scoped": {
			manifest: makeWork("c", "w", 0).Object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader").Spec.Workload.Manifests[0],
			want:     "ClusterRole reader (rbac.authorization.k8s.io/v1)",
		},
		"unreadable manifest, from the status": {
			manifest: workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte("{")}},
			status:   jobMeta,
			want:     "Job ml/train (batch/v1)",
		},
		"unreadable manifest, no status": {
			manifest: workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1"}`)}},
			want:     "(not a Kubernetes object)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, identify(tc.manifest, tc.status)); diff != "" {
				t.Errorf("identify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteOptionAndExecutor(t *testing.T) {
	cases := map[string]struct {
		got, want string
	}{
		"orphan":                     {got: deleteOption(&workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}), want: "Orphan"},
		"only a ttl":                 {got: deleteOption(&workv1.DeleteOption{TTLSecondsAfterFinished: ptr.To[int64](0)}), want: "Foreground, deleted 0s after Complete (ttlSecondsAfterFinished)"},
		"orphaning a group's":        {got: deleteOption(&workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphans: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Group: "apps", Resource: "deployments", Namespace: "web", Name: "web"}, {Resource: "namespaces", Name: "web"}}}}), want: "SelectivelyOrphan, orphaning apps/deployments web/web, namespaces web"},
		"executor without a subject": {got: executor(&workv1.ManifestWorkExecutor{}), want: "the agent's own identity (no subject)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
