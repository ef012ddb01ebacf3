package framework

import "time"

// Code says what the caller does with a Status.
type Code int

const (
	// Success: the cluster stays. A Success status may still carry a RequeueAfter, and a Message
	// for the explanation (such as until when a taint is tolerated).
	Success Code = iota
	// Unschedulable: the cluster is filtered out; Message says why.
	Unschedulable
	// Demoted: the cluster stays, but ranks after every cluster that is not demoted.
	Demoted
	// Warning: the score is used, but the explanation shows Message.
	Warning
)

// Status is a plugin's verdict. nil means Success with nothing to say.
type Status struct {
	Code    Code
	Message string
	// RequeueAfter, when positive, asks the caller to schedule again after this long because the
	// verdict will change then (a toleration expires).
	RequeueAfter time.Duration
}

// NewStatus returns a Status with the code and message.
func NewStatus(code Code, message string) *Status {
	return &Status{Code: code, Message: message}
}

// IsSuccess reports whether the status lets the cluster stay as it is.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success || s.Code == Warning }

// CodeOf returns the code, Success for nil.
func (s *Status) CodeOf() Code {
	if s == nil {
		return Success
	}
	return s.Code
}
