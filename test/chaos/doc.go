// Package chaos holds integration tests that cut the network between the hub and a spoke for
// real (testenv.Link: loopback relays and iptables rules, internal/local/netchaos) and heal it. They
// need root and iptables; see docs/development.md.
package chaos
