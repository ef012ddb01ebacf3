// Package apitest builds API objects for tests, one wrapper per API type in the style of Kueue's
// pkg/util/testing: MakeCluster, MakeClusterSet, MakeClusterSetBinding, MakeWork,
// MakeFederatedLearning and MakeJob (a training Job for simulated GPU nodes) start an object
// with only its name (and what its type needs to be valid), chainable methods add what a test
// needs, and Obj returns a deep copy, so one wrapper can build several objects. A test package that wants a default of its own writes it as a
// one-line preset over these builders.
//
// Only _test.go files import it. It is a leaf: it imports api/ types, k8s.io/api and
// k8s.io/apimachinery, nothing of internal/, so every layer's tests may use it.
package apitest
