// Package errs is the platform's one error vocabulary. Every service returns
// *Error values with a machine code; the gateway maps the code to an HTTP
// status through the single table in codes.go.
package errs

import (
	"errors"
	"fmt"
)

// Detail names one problem with one input field.
type Detail struct {
	Field string `json:"field,omitempty"`
	Issue string `json:"issue"`
}

// Error is a client-facing error: a machine code, a human message and
// optional per-field details. Op records where it arose and is never shown.
type Error struct {
	Code    string
	Message string
	Details []Detail
	Op      string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an *Error with the given code and message.
func E(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid is the common 400 INVALID_INPUT with field details.
func Invalid(msg string, details ...Detail) *Error {
	return &Error{Code: InvalidInput, Message: msg, Details: details}
}

// Field is shorthand for a Detail.
func Field(field, issue string) Detail { return Detail{Field: field, Issue: issue} }

// NotFoundf is the common 404.
func NotFoundf(format string, args ...any) *Error { return E(NotFound, format, args...) }

// Wrap prefixes err with the operation name, keeping it matchable.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// As returns the *Error inside err, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the machine code of err; errors without one are internal.
func CodeOf(err error) string {
	if e := As(err); e != nil {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries the given code.
func Is(err error, code string) bool { return err != nil && CodeOf(err) == code }

// Public returns what a client may see of err: the code, message and details
// of an *Error, or a generic message for anything else so internals never leak.
func Public(err error) (code, message string, details []Detail) {
	if e := As(err); e != nil && e.Code != Internal {
		return e.Code, e.Message, e.Details
	}
	return Internal, "internal error", nil
}

// Body is the JSON shape of an error response.
type Body struct {
	Error     string   `json:"error"`
	Code      string   `json:"code"`
	Details   []Detail `json:"details,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
}
