// Package work is the work agent: it applies the ManifestWorks of its cluster's namespace on the
// hub to the spoke and reports their status back, with OCM's semantics.
//
// It reaches the hub with the registration agent's credentials (registration.HubAccess) and runs
// one controller-runtime controller whose cache holds only that namespace; when the credentials
// change it starts the controller again. Every work is reconciled in one pass (Reconciler):
//
//   - manifests are decoded one by one and applied in order, Namespaces first, then CRDs (a kind
//     whose CRD in the same work is not Established, or not yet in discovery, waits:
//     Applied=False WaitingForCRD and a retry in a second), then the rest in the work's order.
//     Kinds are mapped with discovery, read again when a kind is not found. A manifest that fails (unknown kind,
//     invalid field, forbidden, conflict) fails alone, with the spoke API server's message.
//   - update strategies: Update (create, or replace the object when it lacks something the
//     manifest says; an object that already says it all is only given the work's
//     ownerReference), CreateOnly, ServerSideApply (fieldManager "work-agent" by default, force,
//     ignoreFields as JSONPaths or JSON pointers) and ReadOnly. An object that already has what
//     the manifest says is not written, so a restarted agent writes nothing.
//   - ownership, as OCM marks it: each applied object carries an ownerReference to the work's
//     AppliedManifestWork (cluster-scoped, named `<hub-hash>-<work>`), which records the applied
//     resources with their uid. Update refuses an object that another work owns with other
//     content (ConflictWithWork, naming the work); server-side apply without force reports the
//     API server's conflict (ConflictWithFieldManager).
//   - removal: a resource dropped from a work, or of a deleted work, is deleted only when this
//     work is its last owner and no orphaning applies; otherwise the work's ownerReference is
//     dropped. Deletion (finalizer cluster.open-cluster-management.io/manifest-work-cleanup)
//     waits for Foreground deletions to finish, with the work's Deleting condition saying how
//     many remain; Orphan and SelectivelyOrphan keep resources. ttlSecondsAfterFinished deletes
//     the work from the hub once it has been Complete that long (the clock is injected).
//   - executor: a work whose executor is a ServiceAccount is applied impersonating it, so the
//     spoke's RBAC decides what it may create; the agent's spoke identity needs the verb
//     impersonate on serviceaccounts. Works without one are applied by the agent's identity and
//     every removal runs as the agent (OCM's mode), unless Options.DefaultExecutor names a
//     ServiceAccount (the restricted mode): then works without an executor are applied, read
//     and removed as it, executor works are removed as their executor, and the agent's identity
//     applies no manifest.
//   - status: manifestStatus is the one place a manifest's status is computed (Applied from the
//     apply; Available, condition rules and feedback from internal/core/workstatus, which also
//     aggregates the work's conditions). It is patched on the hub only when it differs from the
//     last one written (workstatus.Changed; conditions keep their lastTransitionTime while their
//     status holds). Works are looked at again every Resync (10 s)
//     for feedback, and at once when an object whose manifestConfig says feedbackScrapeType
//     Watch changes.
package work
