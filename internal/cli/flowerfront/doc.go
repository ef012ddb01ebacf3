// Package flowerfront is `flotilla flower-front`: the process beside a federation's Flower
// SuperLink, in its pod, that serves the SuperLink to the network over HTTPS and keeps its
// unauthenticated Control API for the hub (internal/hub/flowerfront).
package flowerfront
