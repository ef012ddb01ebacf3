// Package mcpserver serves the fleet's state over the Model Context Protocol (MCP), with the
// official Go SDK, for `flotilla mcp`: an assistant lists clusters, GPU capacity, placements with
// their decisions and explanations, ManifestWorks and the hub's Kueue Workloads, simulates
// placements against the live fleet or a fleet it sends, and, only when the server is started
// with writes allowed, changes a Placement's spec or writes an AddOnPlacementScore.
//
// Every tool call reads and writes the hub with the client it is given: the caller's kubeconfig
// identity, so the hub's RBAC decides what each caller sees, and a refusal comes back as a tool
// error naming what was refused and the fix, never as empty data.
//
// Tools take typed arguments whose JSON schema (from jsonschema struct tags) the SDK checks before
// a handler runs; handlers check what a schema cannot say (names, selectors, a change to make)
// and return errors that name the argument and the fix. What the tools compute is shared with the
// CLI: internal/core/gpuview (`flotilla get clusters`), internal/core/placementview and the cores of
// `flotilla explain placement` and `flotilla placement simulate`.
package mcpserver
