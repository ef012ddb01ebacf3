// Package egress is the HTTP client guard for addresses a user names: both sides of dynamic
// scoring use it to reach what a DynamicScorer names (the hub's health and /config checks, the
// agent's Prometheus queries and scoring requests), and the hub's Flower client
// (internal/hub/flowerctl) to reach the SuperLink a FederatedLearning names; the hub's
// ClusterProfiles offer consumers only a cluster address CheckURL accepts
// (internal/hub/clusterprofile). Those addresses are
// written by whoever may create the object, and the hub and agent send requests (the agent with
// tokens) where they point, so the client
//
//   - refuses cloud metadata addresses (169.254.169.254, fd00:ec2::254, metadata.google.internal)
//     always, and loopback, unspecified and link-local ones (169.254.0.0/16, fe80::/10) unless
//     allowLocal is set (a local fleet and tests whose scorers listen on 127.0.0.1 set it). The address is
//     checked when the connection is dialed, after DNS, so a name that resolves (or re-resolves)
//     to a refused address is refused too;
//   - follows no redirect: a 3xx is the answer, which callers treat as an error, so a scorer
//     cannot send the request (and its token) elsewhere;
//   - uses no proxy from the environment, which would dial the target on the client's behalf
//     and so skip the address check.
package egress
