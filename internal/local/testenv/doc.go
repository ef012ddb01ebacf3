// Package testenv gives integration tests a real fleet: a hub and N spoke control planes from
// internal/local/localk8s, started once per test package.
//
// A package starts its fleet in TestMain and each test takes it with Start:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2})) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Start(t, testenv.Options{Spokes: 2})
//		ns := env.Namespace(t, env.Spokes[0])
//		...
//	}
//
// One fleet per package keeps CI fast (an API server is ready in about 2 s, a spoke's
// controllers take a few more); tests share it, so each works in namespaces of its own. The
// fleet's folder, with every process's log, is kept when a test fails and removed otherwise.
//
// Options.HubRuntime gives the hub kube-scheduler and a process-runtime node, RuntimeNode, whose
// pods run as local processes of the test binary (procruntime.NodeRunner, with the images of
// Options.Commands): Deployments applied to the hub, such as the hub chart's, really run.
// Options.SpokeRuntime does the same on every spoke, beside its kwok nodes. The default fleet has
// neither: its hub has no scheduler and no node.
package testenv
