package addon

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// hub is a gpu-score add-on, clusters gpu-east, gpu-west and edge-1; gpu-west has the add-on
// from the ClusterManagementAddOn's install strategy, edge-1 from a user.
func hub() []client.Object {
	mca := func(cluster string, controlled bool) *addonv1alpha1.ManagedClusterAddOn {
		a := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "gpu-score"}}
		if controlled {
			a.OwnerReferences = []metav1.OwnerReference{{APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ClusterManagementAddOn",
				Name: "gpu-score", UID: "cma", Controller: ptr.To(true)}}
		}
		return a
	}
	return []client.Object{
		&addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "gpu-score"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-west"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}},
		mca("gpu-west", true), mca("edge-1", false),
	}
}

func TestAddon(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
		wantErr    string
		// want is the namespaces holding a gpu-score ManagedClusterAddOn afterwards, and the
		// installNamespace of gpu-east's.
		want        []string
		wantInstall string
	}{
		"enable on a new cluster and one that has it": {
			args:        []string{"enable", "gpu-score", "--clusters", "gpu-east,edge-1", "--namespace", "scoring"},
			wantOut:     "edge-1: already enabled (ManagedClusterAddOn edge-1/gpu-score exists)\ngpu-east: enabled (ManagedClusterAddOn gpu-east/gpu-score created)\n",
			want:        []string{"edge-1", "gpu-east", "gpu-west"},
			wantInstall: "scoring",
		},
		"enable on a cluster that does not exist: the others are done": {
			args:       []string{"enable", "gpu-score", "--clusters", "gpu-east,nowhere"},
			wantOut:    "gpu-east: enabled (ManagedClusterAddOn gpu-east/gpu-score created)\n",
			wantErrOut: "nowhere: ManagedCluster nowhere not found: check the name with `flotilla get clusters`\n",
			wantErr:    "add-on gpu-score: 1 of 2 clusters failed: nowhere",
			want:       []string{"edge-1", "gpu-east", "gpu-west"},
		},
		"an add-on that is not installed": {
			args:    []string{"enable", "kueue", "--clusters", "gpu-east"},
			wantErr: "ClusterManagementAddOn kueue not found on the hub of kubeconfig hub.kubeconfig: install the add-on first (its ClusterManagementAddOn), then enable it on clusters",
			want:    []string{"edge-1", "gpu-west"},
		},
		"no clusters": {
			args:    []string{"enable", "gpu-score"},
			wantErr: "--clusters is required: name the managed clusters, e.g. --clusters gpu-east,gpu-west",
			want:    []string{"edge-1", "gpu-west"},
		},
		"a bad install namespace": {
			args:    []string{"enable", "gpu-score", "--clusters", "gpu-east", "--namespace", "Not_A_Namespace"},
			wantErr: `--namespace "Not_A_Namespace" is not a valid namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			want:    []string{"edge-1", "gpu-west"},
		},
		"disable a user's; a cluster without it": {
			args:    []string{"disable", "gpu-score", "--clusters", "edge-1,gpu-east"},
			wantOut: "edge-1: disabled (ManagedClusterAddOn edge-1/gpu-score deleted)\ngpu-east: not enabled (no ManagedClusterAddOn gpu-east/gpu-score)\n",
			want:    []string{"gpu-west"},
		},
		"disable leaves what the install strategy made": {
			args: []string{"disable", "gpu-score", "--clusters", "gpu-west"},
			wantErrOut: "gpu-west: ManagedClusterAddOn gpu-west/gpu-score was installed by ClusterManagementAddOn gpu-score's installStrategy, " +
				"which would install it again: change the placements in its spec.installStrategy so they leave out cluster gpu-west\n",
			wantErr: "add-on gpu-score: 1 of 1 clusters failed: gpu-west",
			want:    []string{"edge-1", "gpu-west"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(hub()...).Build()
			newClient := func(kubeflags.Flags) (client.Client, *kubeflags.Loaded, error) {
				return c, &kubeflags.Loaded{Source: "hub.kubeconfig"}, nil
			}
			io, out, errOut := streams.Buffers()
			root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
			root.AddCommand(newCommand(io, newClient))
			root.SetArgs(append([]string{"addon"}, tc.args...))
			err := root.ExecuteContext(context.Background())
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			list := &addonv1alpha1.ManagedClusterAddOnList{}
			if err := c.List(context.Background(), list); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range list.Items {
				got = append(got, a.Namespace)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusters with the add-on (-want +got):\n%s", diff)
			}
			if tc.wantInstall != "" {
				a := &addonv1alpha1.ManagedClusterAddOn{}
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: "gpu-east", Name: "gpu-score"}, a); err != nil {
					t.Fatal(err)
				}
				if a.Spec.InstallNamespace != tc.wantInstall {
					t.Errorf("installNamespace = %q, want %q", a.Spec.InstallNamespace, tc.wantInstall)
				}
			}
		})
	}
}
