package hub

import (
	"testing"

	"github.com/flotilla/flotilla/config/rbac"
)

// The leader election Role is generated from a marker that names the namespace literally: keep it
// the hub's default.
func TestLeaderElectionRoleNamespace(t *testing.T) {
	if got, want := rbac.LeaderElectionNamespace, DefaultOptions().LeaderElectionNamespace; got != want {
		t.Errorf("config/rbac's leader election Role is in %q, the hub's default --leader-election-namespace is %q; "+
			"change the namespace= of the markers in manager.go and run make generate", got, want)
	}
}
