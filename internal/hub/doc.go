// Package hub assembles `flotilla hub`: one controller-runtime manager, elected leader on a Lease
// so that replicas can stand by, with health and readiness probes, a Prometheus metrics endpoint
// and client rate limits sized for a fleet. Each area's controllers live in a package of their own
// under internal/hub and are added here.
package hub
