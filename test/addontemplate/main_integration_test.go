//go:build integration

package addontemplate

import (
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 3, CRDs: true})) }

// joined is a spoke registered with the hub by a running registration agent, with a running
// work agent.
type joined struct {
	Name  string
	Spoke *testenv.Cluster
	Reg   *agentreg.Agent
}

// joinAll starts the hub, joins every spoke (testenv.JoinSpokes) and starts a work agent on each
// (as test/work does). Everything runs until the test ends.
func joinAll(t *testing.T, env *testenv.Env) []*joined {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
	var out []*joined
	for _, s := range env.JoinSpokes(t) {
		j := &joined{Name: s.Name, Spoke: s.Spoke, Reg: s.Agent}
		out = append(out, j)
		w, err := work.New(work.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Reg.Hub(), Spoke: j.Spoke.RESTConfig(),
			Resync: 2 * time.Second, Log: testr.New(t).WithName(j.Name + "-work"),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, w.Run)
	}
	return out
}
