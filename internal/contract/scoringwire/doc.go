// Package wire is the contract between the hub and the agent sides of dynamic scoring: the
// ConfigMap dynamic-scoring-config the hub writes in each cluster's namespace, and the Summary
// of one scorer it holds. The hub (internal/hub/dynamicscoring) encodes it and the agent's
// built-in add-on (internal/agent/builtin/dynamicscoring) decodes it; neither imports the other,
// so the hub builds in no spoke code and the agent no hub code.
package scoringwire
