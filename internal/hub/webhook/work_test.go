package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/apitest"
)

// makeWork is an empty ManifestWork in namespace gpu-east.
func makeWork(name string) *apitest.WorkWrapper { return apitest.MakeWork("gpu-east", name) }

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
			cur: makeWork("w").Manifest(nsJSON).Manifest(deployJSON).Manifest(jobJSON).Manifest(policyJSON).
				Config("apps", "deployments", "ml", "web").Config("batch", "jobs", "ml", "train").
				Config("networking.k8s.io", "networkpolicies", "ml", "deny").Config("", "namespaces", "", "ml").Obj(),
		},
		"empty work, as OCM": {
			cur:  makeWork("w").Obj(),
			want: []string{workSubject + "spec.workload.manifests is empty: a ManifestWork applies at least one object; add the objects to apply, or delete the ManifestWork"},
		},
		"too large": {
			cur: makeWork("w").Manifest(fmt.Sprintf(big, 0)).Manifest(fmt.Sprintf(big, 1)).Manifest(fmt.Sprintf(big, 2)).Obj(),
			wantSubstrs: []string{workSubject + "spec.workload.manifests hold 614", "more than the 512000 (500 KiB)",
				"the largest is manifests[0]", "split the objects across several ManifestWorks"},
		},
		"just under the limit": {
			cur: makeWork("w").Manifest(fmt.Sprintf(big, 0)).Manifest(fmt.Sprintf(big, 1)).Obj(),
		},
		"not JSON object": {
			cur:  makeWork("w").Manifest(nsJSON).Manifest(`[1,2]`).Obj(),
			want: []string{workSubject + "spec.workload.manifests[1] is not a Kubernetes object (json: cannot unmarshal array into Go value of type map[string]interface {}); give a whole object with apiVersion, kind and metadata.name"},
		},
		"missing kind and name": {
			cur:  makeWork("w").Manifest(`{"apiVersion":"v1","metadata":{"namespace":"ml"}}`).Obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (? ?) has no kind or metadata.name: the agent needs them to find and apply the object; set kind and metadata.name (generateName is not supported)"},
		},
		"missing apiVersion": {
			cur:  makeWork("w").Manifest(`{"kind":"ConfigMap","metadata":{"name":"c","namespace":"ml"}}`).Obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (ConfigMap ml/c) has no apiVersion: the agent needs them to find and apply the object; set apiVersion (generateName is not supported)"},
		},
		"generateName, as OCM": {
			cur:  makeWork("w").Manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generateName":"c-","namespace":"ml"}}`).Obj(),
			want: []string{workSubject + `spec.workload.manifests[0] (ConfigMap ml/c) sets metadata.generateName "c-": the agent must know the object's name to update and delete it; remove generateName`},
		},
		"bad apiVersion": {
			cur:  makeWork("w").Manifest(`{"apiVersion":"a/b/c","kind":"ConfigMap","metadata":{"name":"c"}}`).Obj(),
			want: []string{workSubject + `spec.workload.manifests[0] (ConfigMap c) has apiVersion "a/b/c", which is not group/version or version (unexpected GroupVersion string: a/b/c); write it as, for example, apps/v1`},
		},
		"duplicate object": {
			cur:  makeWork("w").Manifest(deployJSON).Manifest(jobJSON).Manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ml"}}`).Obj(),
			want: []string{workSubject + "spec.workload.manifests[2] (Deployment ml/web) is the same object as manifests[0] (same group, kind, namespace and name): the agent could apply only one of them; remove one, or merge them"},
		},
		"same name in another namespace or of another version is not a duplicate unless group and kind match": {
			cur: makeWork("w").Manifest(deployJSON).Manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"other"}}`).
				Manifest(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ml"}}`).Obj(),
		},
		"manifestConfigs naming no manifest": {
			cur: makeWork("w").Manifest(deployJSON).Config("apps", "deployments", "ml", "api").Obj(),
			want: []string{workSubject + `spec.manifestConfigs[0].resourceIdentifier (group "apps", resource "deployments", namespace "ml", name "api") names no manifest of the work` +
				` (spec.workload.manifests[0] (Deployment ml/web) is group "apps", resource "deployments", namespace "ml", name "web"); point it at a manifest by its group, resource, namespace and name, or remove the entry`},
		},
		"manifestConfigs with the wrong group": {
			cur:         makeWork("w").Manifest(deployJSON).Config("", "deployments", "ml", "web").Obj(),
			wantSubstrs: []string{`spec.manifestConfigs[0].resourceIdentifier (group "", resource "deployments", namespace "ml", name "web") names no manifest`},
		},
		"manifestConfigs with a kind for a resource": {
			cur:  makeWork("w").Manifest(deployJSON).Config("apps", "Deployment", "ml", "web").Obj(),
			want: []string{workSubject + `spec.manifestConfigs[0].resourceIdentifier.resource "Deployment" is not a resource name: resources are lower-case plurals, such as deployments; write "deployments"`},
		},
		"manifestConfigs wildcards, as OCM": {
			cur: makeWork("w").Manifest(deployJSON).Config("apps", "deployments", "*", "*").Config("apps", "deployments", "m*", "w*b").Obj(),
		},
		"manifestConfigs are not checked while a manifest is refused": {
			cur:  makeWork("w").Manifest(`{}`).Config("apps", "deployments", "ml", "web").Obj(),
			want: []string{workSubject + "spec.workload.manifests[0] (? ?) has no apiVersion or kind or metadata.name: the agent needs them to find and apply the object; set apiVersion and kind and metadata.name (generateName is not supported)"},
		},
		"several problems are all listed": {
			cur: makeWork("w").Manifest(`{"apiVersion":"v1","kind":"ConfigMap"}`).Manifest(deployJSON).Manifest(deployJSON).Obj(),
			want: []string{
				workSubject + "spec.workload.manifests[0] (ConfigMap ?) has no metadata.name: the agent needs them to find and apply the object; set metadata.name (generateName is not supported)",
				workSubject + "spec.workload.manifests[2] (Deployment ml/web) is the same object as manifests[1] (same group, kind, namespace and name): the agent could apply only one of them; remove one, or merge them",
			},
		},
		"executor without permission": {
			cur: makeWork("w").Manifest(jobJSON).Executor("ml", "runner").Obj(), user: "alice",
			want:      []string{workSubject + `spec.executor (service account ml/runner) needs permission to execute-as manifestworks on "system:serviceaccount:ml:runner" in namespace "gpu-east" in group work.open-cluster-management.io, since the agent will apply the manifests as that service account; ask a hub administrator to bind a role with it, or remove spec.executor`},
			wantAsked: []Permission{runner},
		},
		"executor with permission": {
			cur: makeWork("w").Manifest(jobJSON).Executor("ml", "runner").Obj(), user: "alice",
			grants: map[string][]Permission{"alice": {runner}}, wantAsked: []Permission{runner},
		},
		"executor without a service account": {
			cur: func() *workv1.ManifestWork {
				w := makeWork("w").Manifest(jobJSON).Obj()
				w.Spec.Executor = &workv1.ManifestWorkExecutor{}
				return w
			}(),
			want: []string{workSubject + "spec.executor names no service account: set subject.type ServiceAccount and subject.serviceAccount (namespace and name on the managed cluster), or remove spec.executor to apply as the agent"},
		},
		"executor unchanged on update is not asked, as OCM": {
			old: makeWork("w").Manifest(jobJSON).Executor("ml", "runner").Obj(),
			cur: makeWork("w").Manifest(deployJSON).Executor("ml", "runner").Obj(), user: "bob",
		},
		"executor changed on update is asked": {
			old: makeWork("w").Manifest(jobJSON).Executor("ml", "other").Obj(),
			cur: makeWork("w").Manifest(jobJSON).Executor("ml", "runner").Obj(), user: "alice",
			grants: map[string][]Permission{"alice": {runner}}, wantAsked: []Permission{runner},
		},
		"update leaving spec alone is allowed even when the spec would be refused": {
			old: makeWork("w").Manifest(`{}`).Executor("ml", "runner").Obj(),
			cur: func() *workv1.ManifestWork {
				w := makeWork("w").Manifest(`{}`).Executor("ml", "runner").Obj()
				w.Finalizers = nil
				w.Labels = map[string]string{"a": "b"}
				return w
			}(),
		},
		"authorizer failure is an error": {
			cur: makeWork("w").Manifest(jobJSON).Executor("ml", "runner").Obj(), user: "alice",
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
		w.Manifest(`{}`)
	}
	got, err := ReviewManifestWork(context.Background(), (&fakeSAR{}).can, alice, nil, w.Obj())
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
