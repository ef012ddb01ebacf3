// Package api tests Flotilla's API types against a real kube-apiserver with the generated CRDs
// installed: bad objects are refused with messages a user understands while their good twins are
// accepted (validation cases, one file per group), and every example in examples/api is created
// and read back unchanged (round trip).
//
// Each group's test file adds its cases and its scheme in an init function, so groups do not edit
// a shared list.
package api
