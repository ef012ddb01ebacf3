// Package floor measures an API server's write floor: how many writes per second of the kinds a
// control loop makes (creates, updates, status updates and status patches of its resources) the
// server takes at that moment, from as many writers as the loop has. A benchmark probes the
// floor on its own API server in its own run, counts the writes the measured path made (from the
// server's apiserver_request_total), and reports its time also as a multiple of the time those
// writes alone take at the probed rates (Rates.Time). A figure from a 2-core machine then
// compares with one from a large hub: 1.0x is as fast as that API server can take the writes.
package floor
