//go:build integration

package floweraddon

import (
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }

// joinAll starts the hub with the hub's generated roles, joins every spoke and starts a work agent
// on each. Everything runs until the test ends.
func joinAll(t *testing.T, env *testenv.Env) []*testenv.Joined {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
	joined := env.JoinSpokes(t)
	for _, j := range joined {
		w, err := work.New(work.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
			Resync: 2 * time.Second, Log: testr.New(t).WithName(j.Name + "-work"),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, w.Run)
	}
	return joined
}
