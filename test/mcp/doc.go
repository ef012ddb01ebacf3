// Package mcp tests `flotilla mcp` end to end: the flotilla binary, built once for the package,
// runs as the MCP server over stdio (the SDK's CommandTransport) and over streamable HTTP (the URL
// it prints first), against a real hub API server with the CRDs installed and the hub's
// controllers running (they make the PlacementDecisions). The test drives it with the SDK's own
// client: it lists the tools, reads clusters, GPU capacity, placements, explanations, what-ifs,
// ManifestWorks and Kueue Workloads (first not served, then with Kueue's CRDs installed); it shows
// that the write tools do not exist without --allow-writes and work with it, that the hub's
// validation errors come back as tool errors, and that a service account allowed to read
// placements in one namespace only gets permission errors, not data, elsewhere.
package mcp
