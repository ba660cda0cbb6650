package ghapp

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v92/github"
)

// Errors callers branch on with errors.Is.
var (
	// ErrNotFound: GitHub answered 404 (no such object, or one outside the
	// token's reach, which GitHub does not tell apart).
	ErrNotFound = errors.New("not found")
	// ErrForbidden: GitHub answered 403 for a reason other than a rate
	// limit (the installation lacks a permission, say).
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthorized: GitHub refused the credentials (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUninstalled: GitHub has no such installation: the App was
	// uninstalled, so nothing more can be done for that account.
	ErrUninstalled = errors.New("installation not found (the App was uninstalled?)")
)

// RateLimitedError is a call refused for a rate limit that would take
// longer than Options.MaxWait to clear (or that persisted through every
// attempt). Wait is how long GitHub asked to wait.
type RateLimitedError struct {
	Wait      time.Duration
	Secondary bool
}

func (e *RateLimitedError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	return fmt.Sprintf("%s rate limit: retry in %s", kind, e.Wait.Round(time.Second))
}

// Error is a failed GitHub call. It matches its Kind (ErrNotFound, a
// *RateLimitedError, …) and its cause with errors.Is and errors.As.
type Error struct {
	Op     string // what was attempted: "update check run 42"
	Repo   Repo   // zero for App-level calls
	Status int    // HTTP status; 0 when no answer arrived
	Kind   error  // one of the sentinels or a *RateLimitedError; may be nil
	Err    error  // the cause, from go-github or the network
}

func (e *Error) Error() string {
	where := ""
	if e.Repo != (Repo{}) {
		where = " " + e.Repo.String()
	}
	return fmt.Sprintf("ghapp: %s%s: %v", e.Op, where, e.Err)
}

func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// apiError wraps err from go-github for op on repo. notFound replaces
// ErrNotFound as the kind of a 404 where it means more (ErrUninstalled
// when minting a token).
func (a *App) apiError(op string, repo Repo, err error, notFound error) error {
	e := &Error{Op: op, Repo: repo, Status: status(err), Err: err}
	var own *Error
	if errors.As(err, &own) {
		// Already classified: a failure to get a token for this call, say.
		// Its 404 is the token's, not this call's.
		return e
	}
	var primary *github.RateLimitError
	var secondary *github.AbuseRateLimitError
	switch {
	case errors.As(err, &primary):
		e.Kind = &RateLimitedError{Wait: max(primary.Rate.Reset.Sub(a.policy.now())+resetSlack, 0)}
	case errors.As(err, &secondary):
		wait := secondaryDefaultWait
		if secondary.RetryAfter != nil {
			wait = *secondary.RetryAfter
		}
		e.Kind = &RateLimitedError{Wait: wait, Secondary: true}
	case e.Status == http.StatusNotFound && notFound != nil:
		e.Kind = notFound
	case e.Status == http.StatusNotFound:
		e.Kind = ErrNotFound
	case e.Status == http.StatusForbidden:
		e.Kind = ErrForbidden
	case e.Status == http.StatusUnauthorized:
		e.Kind = ErrUnauthorized
	}
	return e
}

// status is the HTTP status behind a go-github error, or 0. A status
// inside one of our own errors (a failed token request under an API call)
// is not the call's and counts as none.
func status(err error) int {
	var own *Error
	if errors.As(err, &own) {
		return 0
	}
	var er *github.ErrorResponse
	var primary *github.RateLimitError
	var secondary *github.AbuseRateLimitError
	switch {
	case errors.As(err, &er) && er.Response != nil:
		return er.Response.StatusCode
	case errors.As(err, &primary) && primary.Response != nil:
		return primary.Response.StatusCode
	case errors.As(err, &secondary) && secondary.Response != nil:
		return secondary.Response.StatusCode
	}
	return 0
}
