package webhook

import (
	"errors"
	"net/http"
)

// statusError is an error with the HTTP status and the message the sender
// should see. The cause, if any, is logged but not sent.
type statusError struct {
	code  int
	msg   string
	cause error
}

func (e *statusError) Error() string {
	if e.cause == nil {
		return e.msg
	}
	return e.msg + ": " + e.cause.Error()
}

func (e *statusError) Unwrap() error { return e.cause }

func unauthorized(msg string) error { return &statusError{code: http.StatusUnauthorized, msg: msg} }

func badRequest(msg string, cause error) error {
	return &statusError{code: http.StatusBadRequest, msg: msg, cause: cause}
}

func unavailable(cause error) error {
	return &statusError{
		code:  http.StatusServiceUnavailable,
		msg:   "the delivery could not be queued; redeliver it later",
		cause: cause,
	}
}

// statusOf is the one place that maps an error to a status code and the
// message sent back. Errors the handler did not classify are internal.
func statusOf(err error) (int, string) {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.code, se.msg
	}
	return http.StatusInternalServerError, "internal error"
}

// ignoredError says that a well-formed delivery asks for nothing; it is
// answered 200 with the reason.
type ignoredError struct{ reason string }

func (e *ignoredError) Error() string { return "ignored: " + e.reason }

func ignore(reason string) error { return &ignoredError{reason: reason} }
