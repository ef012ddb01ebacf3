// Package dynamicscoring is the dynamic-scoring built-in add-on of flotilla agent, OCM contrib's
// Dynamic Scoring Agent: for every scorer the hub lists as active in the ConfigMap
// dynamic-scoring-config of the cluster's namespace (see wire.Summary), it runs a Prometheus range
// query on the spoke's source, POSTs the series to the scorer's scoring API and writes the
// scores into an AddOnPlacementScore named after the score, with validUntil a few intervals ahead.
//
// A scorer that fails (source unreachable, bad query, scorer down, slow, malformed or out of
// range) gets the condition Scored=False on its AddOnPlacementScore, naming the DynamicScorer,
// the field and the fix; its old scores are not refreshed, so they expire through validUntil.
// The add-on updates and deletes only AddOnPlacementScores that carry builtinaddon.Label.
// Requests (with their tokens) go through internal/egress: only to the endpoint
// the hub lists, never on through a redirect, never to a metadata address, and to loopback and
// link-local ones only with AllowLocal.
package dynamicscoring
