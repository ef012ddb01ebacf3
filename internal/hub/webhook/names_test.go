package webhook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// madeBy marks ns as made by the hub for ManagedCluster cluster.
func madeBy(ns *corev1.Namespace, cluster string) *corev1.Namespace {
	ns.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: ClusterGroup + "/v1", Kind: "ManagedCluster", Name: cluster, UID: "old-uid", Controller: ptr.To(true),
	}}
	return ns
}

// namespaces is a NamespaceLookup over a fixed set.
func namespaces(nss ...*corev1.Namespace) NamespaceLookup {
	return func(_ context.Context, name string) (*corev1.Namespace, error) {
		for _, ns := range nss {
			if ns.Name == name {
				return ns, nil
			}
		}
		return nil, nil
	}
}

func TestReviewClusterName(t *testing.T) {
	existing := namespaces(
		namespace("team-a"),
		madeBy(namespace("gpu-east"), "gpu-east"),
		madeBy(namespace("gpu-west"), "someone-else"),
	)
	cases := map[string]struct {
		name string
		// wantDenial is a part of the single refusal expected; empty means allowed.
		wantDenial string
	}{
		"a new name":                   {name: "gpu-north"},
		"the hub's namespace, earlier": {name: "gpu-east"},
		"a team's namespace":           {name: "team-a", wantDenial: `namespace "team-a" already exists and the hub did not make it`},
		"owned by another cluster":     {name: "gpu-west", wantDenial: `namespace "gpu-west" already exists`},
		"the bootstrap namespace":      {name: "open-cluster-management", wantDenial: `metadata.name "open-cluster-management" is reserved`},
		"the hub's namespace":          {name: "open-cluster-management-hub", wantDenial: "is reserved"},
		"kube-system":                  {name: "kube-system", wantDenial: "is reserved"},
		"upper case":                   {name: "GPU-East", wantDenial: "metadata.name must be a DNS label"},
		"a dot":                        {name: "gpu.east", wantDenial: "metadata.name must be a DNS label"},
		"too long":                     {name: strings.Repeat("a", 64), wantDenial: "must be no more than 63 characters"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReviewClusterName(context.Background(), existing, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantDenial == "" {
				if diff := cmp.Diff([]string(nil), got); diff != "" {
					t.Errorf("refusals (-want +got):\n%s", diff)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.wantDenial) || !strings.Contains(got[0], nameFix) {
				t.Errorf("refusals = %q, want one containing %q and the fix %q", got, tc.wantDenial, nameFix)
			}
		})
	}
}

func TestReviewClusterNameLookupFails(t *testing.T) {
	failing := func(context.Context, string) (*corev1.Namespace, error) { return nil, errors.New("boom") }
	if _, err := ReviewClusterName(context.Background(), failing, "gpu-east"); err == nil {
		t.Error("ReviewClusterName() with a failing lookup: no error, want one (the webhook must not guess)")
	}
}

// Names under which the agents' identity would be another's (clusteridentity.ReservedClusterNames)
// are refused, whatever namespaces exist; names next to them are not.
func TestReviewClusterNameReservedIdentities(t *testing.T) {
	refusal := func(name string) []string {
		return []string{`managedclusters "` + name + `": metadata.name "` + name + `" is reserved: the identity of the cluster's ` +
			`agents (user system:open-cluster-management:` + name + `:<agent>, group system:open-cluster-management:` + name +
			`) would be one OCM gives others (names reserved: managed-clusters, cluster, addon); register the cluster under ` +
			`another name (flotilla agent --cluster-name)`}
	}
	cases := map[string]struct {
		name string
		want []string
	}{
		"managed-clusters, the group of every agent": {name: "managed-clusters", want: refusal("managed-clusters")},
		"cluster, the prefix of add-on agents":       {name: "cluster", want: refusal("cluster")},
		"addon, the prefix of add-on groups":         {name: "addon", want: refusal("addon")},
		"managed-cluster":                            {name: "managed-cluster"},
		"clusters":                                   {name: "clusters"},
		"addons":                                     {name: "addons"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReviewClusterName(context.Background(), namespaces(), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
}
