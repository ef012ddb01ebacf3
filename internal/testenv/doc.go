// Package testenv gives integration tests a real fleet: a hub and N spoke control planes from
// internal/localk8s, started once per test package.
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
package testenv
