// Package logtest records a component's log entries in tests: Recorder is a logr.Logger (JSON,
// through funcr) whose entries a test then finds by message. Only _test.go files import it, and
// it imports nothing of internal/.
package logtest
