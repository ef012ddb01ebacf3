// Package explain tests the hub's explanation server (internal/hub/explain) against a real hub API
// server, with the hub running in the test process as a service account bound only to its
// generated roles (config/rbac, testenv.HubIdentity), so the tests also show that those roles are
// enough (TokenReviews, SubjectAccessReviews, cached reads). Callers are service accounts with
// their own tokens: one may get placements in the test's namespace and receives what
// placementview computes locally from the same objects; one may create them and has a what-if
// placement explained, which is not created; one has no role and gets 403; a request without
// a token gets 401; a malformed body 400; a missing placement 404; and `flotilla explain placement
// --via-hub`, with a kubeconfig holding the reader's token, prints the hub's answer.
package explain
