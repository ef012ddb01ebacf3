// Package install holds the integration tests of Flotilla's Helm charts: they render the charts
// with Helm's engine, apply them to real local API servers, and run the real flotilla binary as
// the rendered Deployments would (internal/local/procruntime), with the charts' own ServiceAccounts.
package install
