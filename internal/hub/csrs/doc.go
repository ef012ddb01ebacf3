// Package csrs holds what the hub's certificate-request controllers share (cluster renewals in
// internal/hub/registration, add-on agents in internal/hub/addonregistration, custom signers in
// internal/hub/addontemplate): reading a request's conditions, approving one, and finding the
// undecided ones to look at again. Who may be approved is each controller's own decision.
package csrs
