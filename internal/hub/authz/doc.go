// Package authz asks the hub's API server whether a user may do something (SubjectAccessReview),
// for the hub's servers that act on a caller's behalf: the admission webhook and the explanation
// server. RBAC stays the only place permissions are granted.
package authz
