// Package configpolicy is the built-in add-on config-policy-controller (OCM's name): it installs
// the ConfigurationPolicy CRD on the cluster and evaluates every ConfigurationPolicy in the
// namespace named after the cluster (where governance-policy-framework keeps them; others are
// not the add-on's to act on), as
// OCM's config-policy-controller does, writing the result in the policy's status
// (compliant, compliancyDetails with OCM's reasons and messages, relatedObjects).
//
// Each object template names a kind and the fields that matter (match.go): musthave wants an
// object with those fields (lists matched item by item), mustonlyhave exactly those (lists
// whole), mustnothave no such object; labels and annotations follow metadataComplianceType. A
// named template checks that object; an unnamed one every object of the kind (objectSelector).
// Namespaced kinds are checked in the template's namespace or in those namespaceSelector picks
// (include and exclude globs, labels). Under remediationAction enforce the add-on creates,
// updates (merge) or deletes to comply; objects it created are marked createdByPolicy, which
// pruneObjectBehavior DeleteIfCreated deletes with the policy (DeleteAll: every object the policy
// had), through the finalizer PruneFinalizer.
//
// The ConfigurationPolicies of the cluster's namespace are mirrored (builtin.Mirror), so an
// evaluation pass lists nothing. A policy is evaluated when it changes and again after its
// evaluationInterval (compliant or
// noncompliant). With "watch" or no interval (the default) it is evaluated when an object of a
// kind it checks changes: the add-on watches those kinds by metadata only (watch.go), at most
// once per MinWatchGap per policy, so drift is found and put right when it happens; every
// Resync (30 s) is the safety net. The status is written only when more than its evaluation
// time changed.
//
// Before evaluating, cluster templates ({{ ... }}) and object-templates-raw are resolved
// (templates.go, internal/policytemplate); a hub template the hub could not resolve is reported.
// What templates name is read and written as AddOn.Executor (the agent chart's flotilla-policy)
// when set, else with the agent's identity; the differences of an object not as specified are
// recorded field by field (properties.diff).
package configpolicy
