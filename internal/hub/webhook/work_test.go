package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// workWrapper builds test ManifestWorks in namespace gpu-east.
type workWrapper struct{ workv1.ManifestWork }

func makeWork(name string) *workWrapper {
	return &workWrapper{workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "gpu-east"}}}
}

func (w *workWrapper) manifest(raw string) *workWrapper {
	w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}})
	return w
}

func (w *workWrapper) config(group, resource, ns, name string) *workWrapper {
	w.Spec.ManifestConfigs = append(w.Spec.ManifestConfigs, workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: resource, Namespace: ns, Name: name},
	})
	return w
}

func (w *workWrapper) executor(ns, name string) *workWrapper {
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type: workv1.ExecutorSubjectTypeServiceAccount, ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: ns, Name: name},
	}}
	return w
}

func (w *workWrapper) obj() *workv1.ManifestWork { return w.DeepCopy() }

const (
	nsJSON      = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`
	deployJSON  = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ml"},"spec":{"replicas":1}}`
	jobJSON     = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"}}`
	policyJSON  = `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"deny","namespace":"ml"}}`
	workSubject = `manifestworks "w" in namespace "gpu-east": `
)

func TestReviewManifestWork(t *testing.T) {
	runner := ExecutePermission("gpu-east", "ml", "runner")
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big%d","namespace":"ml"},"data":{"k":"` + strings.Repeat("x", 200*1024) + `"}}`
	cases := map[string]struct {
		old, cur    *workv1.ManifestWork
		user        string
		grants      map[string][]Permission
		sarErr      error
		want        []string
		wantAsked   []Permission
		wantErr     bool
		wantSubstrs []string // instead of want, for long messages
	}{
		"valid work": {
			cur: makeWork("w").manifest(nsJSON).manifest(deployJSON).manifest(jobJSON).manifest(policyJSON).
				config("apps", "deployments", "ml", "web").config("batch", "jobs", "ml", "train").
				config("networking.k8s.io", "networkpolicies", "ml", "deny").config("", "namespaces", "", "ml").obj(),
		},
		"empty work, as OCM": {
			cur:  makeWork("w").obj(),
			want: []string{workSubject + "spec.workload.manifests is empty: a ManifestWork applies at least one object; add the objects to apply, or delete the ManifestWork"},
		},
		"too large": {
			cur: makeWork("w").manifest(fmt.Sprintf(big, 0)).manifest(fmt.Sprintf(big, 1)).manifest(fmt.Sprintf(big, 2)).obj(),
			wantSubstrs: []string{workSubject + "spec.workload.manifests hold 614", "more than the 512000 (500 KiB)",
				"the largest is manifests[0]", "split the objects across several ManifestWorks"},
		},
		"just under the limit": {
			cur: makeWork("w").manifest(fmt.Sprintf(big, 0)).manifest(fmt.Sprintf(big, 1)).obj(),
		},
		"not JSON object": {
			cur:  makeWork("w").manifest(nsJSON).manifest(`[1,2]`).obj(),
			want: []string{workSubject + "spec.workload.manifests[1] is not a Kubernetes object (json: cannot unmarshal array into Go value of type map[string]interface {}); give a whole object with apiVersion, kind and metadata.name"},
		},
		"missing kind and name": {
			cur:  makeWork("w").manifest(`{"apiVersion":"v1","metadata":{"namespace":"ml"}}`).obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (? ?) has no kind or metadata.name: the agent needs them to find and apply the object; set kind and metadata.name (generateName is not supported)"},
		},
		"missing apiVersion": {
			cur:  makeWork("w").manifest(`{"kind":"ConfigMap","metadata":{"name":"c","namespace":"ml"}}`).obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (ConfigMap ml/c) has no apiVersion: the agent needs them to find and apply the object; set apiVersion (generateName is not supported)"},
		},
		"generateName, as OCM": {
			cur:  makeWork("w").manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generateName":"c-","namespace":"ml"}}`).obj(),
			want: []string{workSubject + `spec.workload.manifests[0] (ConfigMap ml/c) sets metadata.generateName "c-": the agent must know the object's name to update and delete it; remove generateName`},
		},
		"bad apiVersion": {
			cur:  makeWork("w").manifest(`{"apiVersion":"a/b/c","kind":"ConfigMap","metadata":{"name":"c"}}`).obj(),
			want: []string{workSubject + `spec.workload.manifests[0] (ConfigMap c) has apiVersion "a/b/c", which is not group/version or version (unexpected GroupVersion string: a/b/c); write it as, for example, apps/v1`},
		},
		"duplicate object": {
			cur:  makeWork("w").manifest(deployJSON).manifest(jobJSON).manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ml"}}`).obj(),
			want: []string{workSubject + "spec.workload.manifests[2] (Deployment ml/web) is the same object as manifests[0] (same group, kind, namespace and name): the agent could apply only one of them; remove one, or merge them"},
		},
		"same name in another namespace or of another version is not a duplicate unless group and kind match": {
			cur: makeWork("w").manifest(deployJSON).manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"other"}}`).
				manifest(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ml"}}`).obj(),
		},
		"manifestConfigs naming no manifest": {
			cur: makeWork("w").manifest(deployJSON).config("apps", "deployments", "ml", "api").obj(),
			want: []string{workSubject + `spec.manifestConfigs[0].resourceIdentifier (group "apps", resource "deployments", namespace "ml", name "api") names no manifest of the work` +
				` (spec.workload.manifests[0] (Deployment ml/web) is group "apps", resource "deployments", namespace "ml", name "web"); point it at a manifest by its group, resource, namespace and name, or remove the entry`},
		},
		"manifestConfigs with the wrong group": {
			cur:         makeWork("w").manifest(deployJSON).config("", "deployments", "ml", "web").obj(),
			wantSubstrs: []string{`spec.manifestConfigs[0].resourceIdentifier (group "", resource "deployments", namespace "ml", name "web") names no manifest`},
		},
		"manifestConfigs with a kind for a resource": {
			cur:  makeWork("w").manifest(deployJSON).config("apps", "Deployment", "ml", "web").obj(),
			want: []string{workSubject + `spec.manifestConfigs[0].resourceIdentifier.resource "Deployment" is not a resource name: resources are lower-case plurals, such as deployments; write "deployments"`},
		},
		"manifestConfigs wildcards, as OCM": {
			cur: makeWork("w").manifest(deployJSON).config("apps", "deployments", "*", "*").config("apps", "deployments", "m*", "w*b").obj(),
		},
		"manifestConfigs are not checked while a manifest is refused": {
			cur:  makeWork("w").manifest(`{}`).config("apps", "deployments", "ml", "web").obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (? ?) has no apiVersion or kind or metadata.name: the agent needs them to find and apply the object; set apiVersion and kind and metadata.name (generateName is not supported)"},
		},
		"several problems are all listed": {
			cur: makeWork("w").manifest(`{"apiVersion":"v1","kind":"ConfigMap"}`).manifest(deployJSON).manifest(deployJSON).obj(),
			want: []string{
				workSubject + "spec.workload.manifests[0] (ConfigMap ?) has no metadata.name: the agent needs them to find and apply the object; set metadata.name (generateName is not supported)",
				workSubject + "spec.workload.manifests[2] (Deployment ml/web) is the same object as manifests[1] (same group, kind, namespace and name): the agent could apply only one of them; remove one, or merge them",
			},
		},
		"executor without permission": {
			cur: makeWork("w").manifest(jobJSON).executor("ml", "runner").obj(), user: "alice",
			want:      []string{workSubject + `spec.executor (service account ml/runner) needs permission to execute-as manifestworks on "system:serviceaccount:ml:runner" in namespace "gpu-east" in group work.open-cluster-management.io, since the agent will apply the manifests as that service account; ask a hub administrator to bind a role with it, or remove spec.executor`},
			wantAsked: []Permission{runner},
		},
		"executor with permission": {
			cur: makeWork("w").manifest(jobJSON).executor("ml", "runner").obj(), user: "alice",
			grants: map[string][]Permission{"alice": {runner}}, wantAsked: []Permission{runner},
		},
		"executor without a service account": {
			cur: func() *workv1.ManifestWork {
				w := makeWork("w").manifest(jobJSON).obj()
				w.Spec.Executor = &workv1.ManifestWorkExecutor{}
				return w
			}(),
			want: []string{workSubject + "spec.executor names no service account: set subject.type ServiceAccount and subject.serviceAccount (namespace and name on the managed cluster), or remove spec.executor to apply as the agent"},
		},
		"executor unchanged on update is not asked, as OCM": {
			old: makeWork("w").manifest(jobJSON).executor("ml", "runner").obj(),
			cur: makeWork("w").manifest(deployJSON).executor("ml", "runner").obj(), user: "bob",
		},
		"executor changed on update is asked": {
			old: makeWork("w").manifest(jobJSON).executor("ml", "other").obj(),
			cur: makeWork("w").manifest(jobJSON).executor("ml", "runner").obj(), user: "alice",
			grants: map[string][]Permission{"alice": {runner}}, wantAsked: []Permission{runner},
		},
		"update leaving spec alone is allowed even when the spec would be refused": {
			old: makeWork("w").manifest(`{}`).executor("ml", "runner").obj(),
			cur: func() *workv1.ManifestWork {
				w := makeWork("w").manifest(`{}`).executor("ml", "runner").obj()
				w.Finalizers = nil
				w.Labels = map[string]string{"a": "b"}
				return w
			}(),
		},
		"authorizer failure is an error": {
			cur: makeWork("w").manifest(jobJSON).executor("ml", "runner").obj(), user: "alice",
			sarErr: errors.New("API server down"), wantErr: true, wantAsked: []Permission{runner},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeSAR{grants: tc.grants, err: tc.sarErr}
			user := alice
			user.Username = tc.user
			got, err := ReviewManifestWork(context.Background(), f.can, user, tc.old, tc.cur)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantSubstrs != nil {
				if len(got) != 1 {
					t.Fatalf("denials = %q, want one", got)
				}
				for _, s := range tc.wantSubstrs {
					if !strings.Contains(got[0], s) {
						t.Errorf("denial %q does not contain %q", got[0], s)
					}
				}
			} else if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("denials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, f.asked); diff != "" {
				t.Errorf("asked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewManifestWorkCapsDenials(t *testing.T) {
	w := makeWork("w")
	for range 15 {
		w.manifest(`{}`)
	}
	got, err := ReviewManifestWork(context.Background(), (&fakeSAR{}).can, alice, nil, w.obj())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != maxWorkDenials+1 || got[maxWorkDenials] != workSubject+"5 more problems" {
		t.Errorf("denials = %d, last %q; want %d and a count of the rest", len(got), got[len(got)-1], maxWorkDenials+1)
	}
}

func TestGlob(t *testing.T) {
	cases := map[string]struct {
		pattern, s string
		want       bool
	}{
		"exact":           {"web", "web", true},
		"exact mismatch":  {"web", "api", false},
		"star":            {"*", "anything", true},
		"star empty":      {"*", "", true},
		"prefix":          {"ns*", "ns1", true},
		"prefix mismatch": {"ns*", "xns", false},
		"suffix":          {"*-db", "orders-db", true},
		"middle":          {"a*c*e", "abcde", true},
		"middle mismatch": {"a*c*e", "abde", false},
		"overlap":         {"ab*ba", "aba", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := glob(tc.pattern, tc.s); got != tc.want {
				t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
			}
		})
	}
}
