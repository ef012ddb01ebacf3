// Package crdcompat compares a CustomResourceDefinition with a reference one (OCM's published
// CRDs) and lists every way ours would break a client written against the reference: a
// different name, scope or served version, or a field of the reference schema that ours lacks or
// types differently (type, enum values, list and map semantics). Fields ours adds are allowed.
//
// Differences are plain values with a stable key, so that the deliberate ones can be listed, with
// their reason, in docs/compatibility.md and accepted by the test that reads that table.
package crdcompat
