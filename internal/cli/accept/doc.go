// Package accept is `flotilla accept`: admits clusters to the hub (approves their certificate
// requests and sets spec.hubAcceptsClient), with the permissions of the user who runs it.
package accept
