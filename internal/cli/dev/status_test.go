package dev

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/local/devfleet"
)

func TestDashboardCommand(t *testing.T) {
	for name, tc := range map[string]struct {
		st   devfleet.State
		want string
	}{
		"hub": {st: devfleet.State{Clusters: []devfleet.ClusterState{
			{Name: "spoke-a", Role: devfleet.RoleSpoke, Kubeconfig: "/s/spoke-a.kubeconfig"},
			{Name: "hub", Role: devfleet.RoleHub, Kubeconfig: "/home/me/.flotilla/dev/hub/kubeconfig"}}},
			want: "flotilla dashboard --kubeconfig /home/me/.flotilla/dev/hub/kubeconfig"},
		"quoted": {st: devfleet.State{Clusters: []devfleet.ClusterState{{Name: "hub", Role: devfleet.RoleHub, Kubeconfig: "/tmp/my fleet/it's"}}},
			want: `flotilla dashboard --kubeconfig '/tmp/my fleet/it'\''s'`},
		"no hub": {st: devfleet.State{Clusters: []devfleet.ClusterState{{Name: "spoke-a", Role: devfleet.RoleSpoke}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DashboardCommand(&tc.st)); diff != "" {
				t.Errorf("DashboardCommand (-want +got):\n%s", diff)
			}
		})
	}
}
