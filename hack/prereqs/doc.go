// Package prereqs holds the tests of prereqs.sh, the script every make target that needs more
// than Go runs first: it checks this machine for what the target needs (Node.js, Chromium,
// Prometheus, iptables and root, Python's venv, ...) and prints, for each thing missing, why it
// is needed and the exact command that installs it. The tests run the script against a PATH of
// stand-in commands, so each case is a machine that lacks something.
package prereqs
