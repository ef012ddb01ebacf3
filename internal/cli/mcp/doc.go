// Package mcp is `flotilla mcp`: a Model Context Protocol server over the fleet's state
// (internal/hub/mcpserver), for AI assistants, with the caller's kubeconfig identity, on stdio or on
// loopback HTTP.
package mcp
