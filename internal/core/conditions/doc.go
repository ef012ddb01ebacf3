// Package conditions compares status conditions the way controllers need to decide whether a
// status write is due: by type, status, reason, message and observed generation, ignoring the
// transition time that SetStatusCondition keeps or sets.
package conditions
