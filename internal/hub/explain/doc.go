// Package explain is the hub's explanation endpoint: over HTTPS it serves, for one Placement, the
// same explanation `flotilla explain placement` prints with -o json (internal/core/placementview's
// Output): every cluster of the eligible sets, selected, filtered or not chosen, and why.
//
//	GET  /explain/namespaces/NS/placements/NAME  explains the stored placement NS/NAME
//	POST /explain/namespaces/NS/placements       explains the Placement in the body (JSON or YAML)
//	                                             without creating it: a what-if
//
// Two ideas:
//
//   - The hub answers only what the caller could learn from the API server itself. A caller sends
//     its bearer token (Authorization: Bearer ...), which the API server authenticates with a
//     TokenReview; the hub then asks, with a SubjectAccessReview for that user (groups, extra and
//     uid included), whether the caller may get placements.cluster.open-cluster-management.io NAME
//     in NS (GET), or create placements in NS (POST: a what-if shows what creating that placement
//     would select, so it needs the permission to create it). Client certificates are not accepted:
//     the hub does not hold the API server's client CA; send a token (`kubectl create token`).
//
//   - Everything is read from the manager's cache, as the placement controller reads it, and
//     scheduled with the same core (internal/core/scheduler) and the hub's clock, so a GET explains what
//     the controller decides. A POSTed placement is decoded strictly (unknown or duplicate fields,
//     wrong types: 400 naming the field); checks that only the API server makes (the CRD's
//     OpenAPI and CEL rules) are not repeated, and what the scheduler finds wrong (invalid CEL, an
//     unknown prioritizer) is in the answer's PlacementMisconfigured condition, as on the hub.
//
// Errors are metav1.Status JSON bodies (401, 403 with the SubjectAccessReview's reason, 404, 400,
// 405, 500) whose message names the object and what would fix it.
package explain
