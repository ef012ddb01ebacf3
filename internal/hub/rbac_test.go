package hub

import (
	"testing"

	"github.com/flotilla/flotilla/config/rbac"
	"github.com/flotilla/flotilla/internal/hub/flower"
)

// The leader election Role is generated from a marker that names the namespace literally: keep it
// the hub's default.
func TestLeaderElectionRoleNamespace(t *testing.T) {
	if got, want := rbac.LeaderElectionNamespace, DefaultOptions().LeaderElectionNamespace; got != want {
		t.Errorf("config/rbac's leader election Role is in %q, the hub's default --leader-election-namespace is %q; "+
			"change the namespace= of the markers in manager.go and run make generate", got, want)
	}
}

// The flower Role is generated from markers that name flower-system literally: keep it the
// add-on's namespace.
func TestFlowerRoleNamespace(t *testing.T) {
	if got, want := rbac.FlowerNamespace, flower.Namespace; got != want {
		t.Errorf("config/rbac's flower Role is in %q, the flower add-on's namespace is %q; "+
			"change the namespace= of the markers in internal/hub/flower and run make generate", got, want)
	}
}
