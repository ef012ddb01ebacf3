// Package dashboard is Flotilla's read-only web dashboard: an http.Handler that serves the
// single-page app web/dashboard builds (embedded in the binary) and the JSON API it reads.
//
//	GET  /api/clusters         the fleet: availability, heartbeat, taints, sets, labels, claims, version
//	GET  /api/gpus             GPU capacity per model, per cluster and per node
//	GET  /api/gpus/history     the fleet's free and allocatable GPUs per model over time
//	GET  /api/placements       placements with their decisions
//	GET  /api/placements/NS/NAME            the per-cluster explanation `flotilla explain` gives
//	POST /api/placements/NS/NAME/simulate   what-if: schedule the Placement in the body, create nothing
//	GET  /api/works            ManifestWorks with their per-cluster status and feedback
//	GET  /api/workreplicasets  ManifestWorkReplicaSets and their progress
//	GET  /api/addons           add-ons per cluster
//	GET  /api/jobs             Kueue Workloads on the hub and federated-learning runs
//	GET  /api/jobs/NS/NAME     one Workload and its stages in time
//	GET  /api/queues           FleetQueues: each team's GPUs held against its fair share, its queue
//	GET  /api/policies         root policies with each placed cluster's compliance
//	GET  /api/events?view=V    Server-Sent Events: "change" when what view V shows changed
//
// Every request reads the hub with the viewer's own identity (Identity): the kubeconfig's for
// `flotilla dashboard` on loopback, the bearer token the viewer logged in with when the hub serves
// it, sealed in a session cookie that logout revokes on every replica (Sessions, session.go; the
// logouts are kept in a ConfigMap every replica watches, revocations.go). Nothing is cached
// across viewers and the server's own credentials never read objects (but for History's totals
// and shares, shown only to viewers who may list every object they add up), so a viewer sees what the hub's RBAC lets them see and a refusal is shown as a refusal. A missing or
// rejected credential gets 401 with {"login": "/login"}.
//
// Lists are paged on the server (limit, at most MaxLimit, and an opaque continue token) in a
// stable order: by name, or by namespace and name. Bad parameters, unknown routes and oversized
// pages get 400 or 404 JSON errors that name the parameter or route and the fix.
package dashboard
