package flowerctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
)

// maxErrorBody bounds the error body read, as the flwr CLI does (64 KiB).
const maxErrorBody = 64 << 10

// Error is a failed Control API call. Its message names the SuperLink's address, the method and
// what the SuperLink or the transport said.
type Error struct {
	Address string // the SuperLink's host:port
	Method  string // the Control API method, e.g. "ListRuns"
	// HTTPStatus is the answer's HTTP status; 0 when there was no answer or it was a 200.
	HTTPStatus int
	// Code is Flower's API error code from the JSON error body (flwr ApiErrorCode; 16 is
	// RUN_ID_NOT_FOUND); 0 when absent.
	Code int
	// Detail is the SuperLink's message (the JSON body's "detail"), or what went wrong here.
	Detail string
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "flower SuperLink %s: %s", e.Address, e.Method)
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.HTTPStatus)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	if e.Code != 0 {
		fmt.Fprintf(&b, " (Flower error code %d)", e.Code)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsNotFound reports whether err is the SuperLink's 404, e.g. for a run ID it does not know, or
// for UnregisterNode of a node it does not know or that is already unregistered.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
}

// codePublicKeyAlreadyInUse is Flower's ApiErrorCode.PUBLIC_KEY_ALREADY_IN_USE, which the
// SuperLink answers with HTTP 412 (flwr/supercore/error/catalog.py). An invalid key is also a
// 412, with code 22 (PUBLIC_KEY_NOT_VALID): the code tells them apart.
const codePublicKeyAlreadyInUse = 23

// IsAlreadyExists reports whether err is the SuperLink's answer to RegisterNode of a public key
// it already holds (HTTP 412, Flower error code 23). The key may belong to an unregistered node:
// Flower keeps an unregistered node's key taken, so such a key can never be registered again on
// that SuperLink's state; ListNodes tells which.
func IsAlreadyExists(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == http.StatusPreconditionFailed && e.Code == codePublicKeyAlreadyInUse
}

func (c *Client) errorf(method string, err error, format string, args ...any) *Error {
	return &Error{Address: c.Address, Method: method, Detail: fmt.Sprintf(format, args...), Err: err}
}

// statusError turns a non-200 answer into an *Error, with Flower's JSON error body
// ({"code": 16, "detail": "Run ID not found."}; FastAPI's own errors carry only "detail") or,
// for another body, a short printable excerpt of it.
func (c *Client) statusError(method string, resp *http.Response) *Error {
	e := &Error{Address: c.Address, Method: method, HTTPStatus: resp.StatusCode}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		e.Err = fmt.Errorf("reading the error body: %w", err)
		return e
	}
	var payload struct {
		Code   int             `json:"code"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &payload) == nil && len(payload.Detail) > 0 {
		e.Code = payload.Code
		var s string
		if json.Unmarshal(payload.Detail, &s) == nil {
			e.Detail = s
		} else { // FastAPI's validation errors: a list of objects
			e.Detail = excerpt(payload.Detail)
		}
		return e
	}
	e.Detail = excerpt(body)
	if e.Detail == "" {
		e.Detail = http.StatusText(resp.StatusCode)
	}
	return e
}

// excerpt is up to 200 characters of b, with control characters replaced, for error messages.
func excerpt(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, strings.ToValidUTF8(string(b), "?"))
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}
