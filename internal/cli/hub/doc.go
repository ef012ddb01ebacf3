// Package hub is `flotilla hub`: the hub's controllers in one manager, run next to the hub's API
// server.
package hub
