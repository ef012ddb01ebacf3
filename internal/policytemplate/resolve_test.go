package policytemplate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// objects is a Source of fixed objects, keyed kind/namespace/name; it records what was read.
type objects struct {
	byKey map[string]map[string]any
	read  []string
}

func (o *objects) Get(_ context.Context, _, kind, ns, name string) (map[string]any, error) {
	key := kind + "/" + ns + "/" + name
	o.read = append(o.read, key)
	if obj, ok := o.byKey[key]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, name)
}

func (o *objects) List(_ context.Context, _, kind, ns string) ([]map[string]any, error) {
	var out []map[string]any
	for key, obj := range o.byKey {
		if strings.HasPrefix(key, kind+"/"+ns+"/") {
			out = append(out, obj)
		}
	}
	return out, nil
}

func fixture() *objects {
	return &objects{byKey: map[string]map[string]any{
		"ConfigMap/team-a/settings":                       {"data": map[string]any{"replicas": "3", "region": "eu-west", "debug": "true"}},
		"ConfigMap/other/settings":                        {"data": map[string]any{"region": "us-east"}},
		"Secret/team-a/db":                                {"data": map[string]any{"password": "czNjcmV0"}},
		"ClusterClaim//region.open-cluster-management.io": {"spec": map[string]any{"value": "eu-west-1"}},
		"ManagedCluster//gpu-east":                        {"metadata": map[string]any{"name": "gpu-east", "labels": map[string]any{"env": "prod"}}},
	}}
}

func TestResolve(t *testing.T) {
	hubCtx := map[string]any{"ManagedClusterName": "gpu-east", "ManagedClusterLabels": map[string]string{"env": "prod"}}
	onlyCluster := func(_, kind, name string) bool { return kind == "ManagedCluster" && name == "gpu-east" }
	for name, tc := range map[string]struct {
		in      string
		opts    Options
		want    string
		wantErr string
	}{
		"no template": {in: `{"a":"b"}`, opts: Options{Delims: Cluster}, want: `{"a":"b"}`},
		"fromConfigMap on the cluster": {in: `{"data":{"r":"{{ fromConfigMap \"team-a\" \"settings\" \"region\" }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"data":{"r":"eu-west"}}`},
		"toInt keeps the type": {in: `{"spec":{"replicas":"{{ fromConfigMap \"team-a\" \"settings\" \"replicas\" | toInt }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"spec":{"replicas":3}}`},
		"toBool keeps the type": {in: `{"spec":{"debug":"{{ fromConfigMap \"team-a\" \"settings\" \"debug\" | toBool }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"spec":{"debug":true}}`},
		"fromSecret stays base64, base64dec reads it": {in: `{"data":{"p":"{{ fromSecret \"team-a\" \"db\" \"password\" }}","q":"{{ fromSecret \"team-a\" \"db\" \"password\" | base64dec }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"data":{"p":"czNjcmV0","q":"s3cret"}}`},
		"fromClusterClaim": {in: `{"data":{"r":"{{ fromClusterClaim \"region.open-cluster-management.io\" }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"data":{"r":"eu-west-1"}}`},
		"lookup of nothing is empty": {in: `{"data":{"r":"{{ (lookup \"v1\" \"ConfigMap\" \"team-a\" \"none\").data }}"}}`,
			opts: Options{Delims: Cluster}, want: `{"data":{"r":"\u003cno value\u003e"}}`},
		"copyConfigMapData": {in: `{"data":"{{ copyConfigMapData \"other\" \"settings\" }}"}`,
			opts: Options{Delims: Cluster}, want: `{"data":{"region":"us-east"}}`},
		"hub templates leave cluster templates": {in: `{"data":{"h":"{{hub .ManagedClusterName hub}}","c":"{{ fromClusterClaim \"x\" }}"}}`,
			opts: Options{Delims: Hub, Context: hubCtx}, want: `{"data":{"c":"{{ fromClusterClaim \"x\" }}","h":"gpu-east"}}`},
		"hub: the policy's namespace by default": {in: `{"data":{"r":"{{hub fromConfigMap \"\" \"settings\" \"region\" hub}}"}}`,
			opts: Options{Delims: Hub, Namespace: "team-a"}, want: `{"data":{"r":"eu-west"}}`},
		"hub: labels of the cluster": {in: `{"data":{"env":"{{hub index .ManagedClusterLabels \"env\" hub}}"}}`,
			opts: Options{Delims: Hub, Context: hubCtx, Namespace: "team-a"}, want: `{"data":{"env":"prod"}}`},
		"hub: the copy's ManagedCluster may be looked up": {in: `{"data":{"n":"{{hub (lookup \"cluster.open-cluster-management.io/v1\" \"ManagedCluster\" \"\" \"gpu-east\").metadata.name hub}}"}}`,
			opts: Options{Delims: Hub, Namespace: "team-a", ClusterScoped: onlyCluster}, want: `{"data":{"n":"gpu-east"}}`},
		"hub: another namespace is refused": {in: `{"data":{"r":"{{hub fromConfigMap \"other\" \"settings\" \"region\" hub}}"}}`,
			opts: Options{Delims: Hub, Namespace: "team-a"}, wantErr: "the namespace argument is restricted to team-a: other is another namespace"},
		"hub: a Secret of another namespace is refused": {in: `{"data":{"r":"{{hub fromSecret \"other\" \"db\" \"password\" hub}}"}}`,
			opts: Options{Delims: Hub, Namespace: "team-a"}, wantErr: "restricted to team-a"},
		"hub: another cluster-scoped object is refused": {in: `{"data":{"r":"{{hub fromClusterClaim \"region.open-cluster-management.io\" hub}}"}}`,
			opts: Options{Delims: Hub, Namespace: "team-a", ClusterScoped: onlyCluster}, wantErr: "restricted to team-a: ClusterClaim region.open-cluster-management.io is cluster-scoped"},
		"a missing ConfigMap names it": {in: `{"data":{"r":"{{ fromConfigMap \"team-a\" \"nope\" \"k\" }}"}}`,
			opts: Options{Delims: Cluster}, wantErr: `failed to get the ConfigMap nope from team-a: configmaps "nope" not found`},
		"fromConfigMap without a namespace": {in: `{"data":{"r":"{{ fromConfigMap \"\" \"settings\" \"k\" }}"}}`,
			opts: Options{Delims: Cluster}, wantErr: "the namespace and name of the ConfigMap must be given"},
		"a malformed template":  {in: `{"data":{"r":"{{ fromConfigMap \"a\" "}}`, opts: Options{Delims: Cluster}, wantErr: "parsing the templates"},
		"an unknown function":   {in: `{"data":{"r":"{{ fromVault \"a\" }}"}}`, opts: Options{Delims: Cluster}, wantErr: `function "fromVault" not defined`},
		"until is bounded":      {in: `{"a":"{{ range until 100000000 }}x{{ end }}"}`, opts: Options{Delims: Cluster}, wantErr: "until 100000000 makes more than 10000 items"},
		"repeat is bounded":     {in: `{"a":"{{ repeat 100000000 \"xx\" }}"}`, opts: Options{Delims: Cluster}, wantErr: "makes more than"},
		"output is bounded":     {in: `{"a":"{{ range until 10000 }}{{ repeat 1000 \"x\" }}{{ end }}"}`, opts: Options{Delims: Cluster}, wantErr: "exceed 4194304 bytes"},
		"env is not a function": {in: `{"data":{"r":"{{ env \"HOME\" }}"}}`, opts: Options{Delims: Cluster}, wantErr: `function "env" not defined`},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.opts.Source == nil {
				tc.opts.Source = fixture()
			}
			got, err := Resolve(context.Background(), []byte(tc.in), tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q (got %s)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
}

// The restricted-namespace refusal reads nothing: the hub's identity never fetches the object.
func TestRestrictedReadsNothing(t *testing.T) {
	src := fixture()
	_, err := Resolve(context.Background(), []byte(`{"a":"{{hub fromSecret \"other\" \"db\" \"password\" hub}}"}`),
		Options{Delims: Hub, Namespace: "team-a", Source: src})
	if !errors.Is(err, ErrRestrictedNamespace) {
		t.Fatalf("err = %v, want ErrRestrictedNamespace", err)
	}
	if len(src.read) > 0 {
		t.Errorf("read %v before refusing", src.read)
	}
}

func TestHas(t *testing.T) {
	for in, want := range map[string][2]bool{
		`{"a":"b"}`:                      {false, false},
		`{"a":"{{hub .X hub}}"}`:         {true, false},
		`{"a":"{{ .X }}"}`:               {false, true},
		`{"a":"{{hub .X hub}} {{ y }}"}`: {true, true},
	} {
		if got := [2]bool{Has([]byte(in), Hub), Has([]byte(in), Cluster)}; got != want {
			t.Errorf("Has(%s) hub, cluster = %v, want %v", in, got, want)
		}
	}
}

func TestAutoindent(t *testing.T) {
	in := "data:\n  cfg: |\n    {{ fromConfigMap \"team-a\" \"multi\" \"k\" | autoindent }}\n"
	src := &objects{byKey: map[string]map[string]any{"ConfigMap/team-a/multi": {"data": map[string]any{"k": "a: 1\nb: 2"}}}}
	got, err := ResolveText(context.Background(), in, Options{Delims: Cluster, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if want := "data:\n  cfg: |\n    a: 1\n    b: 2\n"; got != want {
		t.Errorf("autoindent: got %q, want %q", got, want)
	}
}
