// Package work tests the work agent (internal/agent/work) against real API servers: a hub and two
// spokes, each spoke joined by a real registration agent, whose hub credentials the work agent
// uses. The tests run with the build tag integration.
package work
