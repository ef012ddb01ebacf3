// Package placement is `flotilla placement`, whose one verb, simulate, schedules Placements
// against a fleet described in files, with no hub: the same scheduling core the hub runs
// (internal/core/scheduler), fed by the same snapshot builder `flotilla explain` uses
// (placementview.SnapshotFrom).
//
// Files are multi-document YAML decoded strictly, as the API server would: a kind is recognized by
// its apiVersion and kind, and an unknown kind, a malformed document or an unknown field is an
// error that names the file, the document number (1-based) and its first line, and the field.
// Documents are counted at each "---" line, empty and comment-only ones included, except that a
// "---" on a file's first line starts no empty document before it.
package placement
