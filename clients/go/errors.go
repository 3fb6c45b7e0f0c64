package ringd

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sentinels matched with errors.Is. Each typed error below matches one
// (or, for an *APIError, the one its status and problem type name), so a
// caller can branch on the kind without knowing the type.
var (
	// ErrClosed: the Client or Member was closed.
	ErrClosed = errors.New("ringd: closed")
	// ErrInvalidOption: NewClient or NewMember was given a setting out of
	// range, a malformed URL or name.
	ErrInvalidOption = errors.New("ringd: invalid option")
	// ErrUnreachable: no server answered (every URL was tried).
	ErrUnreachable = errors.New("ringd: no server reachable")
	// ErrUnauthorized: the server wants a token and got none, or a wrong
	// one (401).
	ErrUnauthorized = errors.New("ringd: unauthorized")
	// ErrForbidden: the token may not do that, e.g. the read token used
	// for a registration (403).
	ErrForbidden = errors.New("ringd: forbidden")
	// ErrRingNotFound: the ring does not exist (404 ring-not-found).
	ErrRingNotFound = errors.New("ringd: ring not found")
	// ErrLeaseNotFound: the lease expired, was released or never existed
	// (404 lease-not-found).
	ErrLeaseNotFound = errors.New("ringd: lease not found")
	// ErrMalformedResponse: a body or event that is not what the API
	// documents.
	ErrMalformedResponse = errors.New("ringd: malformed response")
	// ErrSnapshotRefused: a snapshot failed verification and was not
	// routed on. Its cause (placement.ErrFingerprintMismatch and the other
	// placement kinds) matches too.
	ErrSnapshotRefused = errors.New("ringd: snapshot refused")
)

// APIError is an error status from ringd, with the RFC 9457 problem
// document when the server sent one (a proxy's own error page has none:
// then only Status and URL are set).
type APIError struct {
	// Status is the HTTP status.
	Status int
	// URL is the URL asked.
	URL string
	// Type is the problem type, urn:ringd:problem:<slug>; "" without a
	// problem document.
	Type string
	// Title is the problem's short summary.
	Title string
	// Detail says what went wrong and how to fix it.
	Detail string
	// Field names the offending input, if any.
	Field string

	// retryAfter is the answer's Retry-After in delta-seconds, when
	// hasRetryAfter; see RetryAfter.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// RetryAfter is the wait the answer's Retry-After header asks for, and
// whether it had one in delta-seconds ("7"); the HTTP-date form and
// anything else unreadable count as none. ringd sends one with a watch
// or long-poll refused because the instance serves its --max-watchers
// (503 at-capacity, 1 to 10 s drawn at random) and with a 503
// unavailable (1 s); the watch honours it (see WithBackoff).
func (e *APIError) RetryAfter() (time.Duration, bool) {
	return e.retryAfter, e.hasRetryAfter
}

// parseRetryAfter reads a Retry-After header in delta-seconds (RFC 9110
// section 10.2.3: digits only, here with surrounding spaces allowed); the
// HTTP-date form, a sign, a fraction or garbage count as none (false). A
// wait too long for a time.Duration is the longest one; it is cut to the
// backoff's maximum anyway.
func parseRetryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return 0, false
	}
	secs, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false // more than 2^64 s: garbage rather than a wait
	}
	if secs > uint64(math.MaxInt64/int64(time.Second)) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(secs) * time.Second, true
}

// Slug is the last part of Type ("ring-not-found"), "" without one.
func (e *APIError) Slug() string {
	return strings.TrimPrefix(e.Type, "urn:ringd:problem:")
}

// Error says the status, the problem and the URL.
func (e *APIError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("ringd answered %d from %s", e.Status, e.URL)
	}
	return fmt.Sprintf("ringd refused %s: %d %s: %s", e.URL, e.Status, e.Slug(), e.Detail)
}

// Is matches the sentinel the status names: ErrUnauthorized for 401,
// ErrForbidden for 403, ErrRingNotFound and ErrLeaseNotFound for their
// 404s.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == 401
	case ErrForbidden:
		return e.Status == 403
	case ErrRingNotFound:
		return e.Status == 404 && e.Slug() == "ring-not-found"
	case ErrLeaseNotFound:
		return e.Status == 404 && e.Slug() == "lease-not-found"
	}
	return false
}

// UnreachableError is a request no server answered.
type UnreachableError struct {
	// URLs are the servers tried.
	URLs []string
	// Err is the last transport error.
	Err error
}

// Error names the servers and the last failure.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("no ringd server reachable (%s): %v", strings.Join(e.URLs, ","), e.Err)
}

// Unwrap returns ErrUnreachable and the transport error, so both
// errors.Is(err, ErrUnreachable) and errors.Is(err, context.Canceled)
// work.
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// MalformedError is a body or event that could not be read.
type MalformedError struct {
	// What was being read: a URL, or an event type.
	What string
	// Err says why.
	Err error
}

// Error names what was being read.
func (e *MalformedError) Error() string {
	return fmt.Sprintf("unexpected response from ringd: %s: %v", e.What, e.Err)
}

// Unwrap returns ErrMalformedResponse and the cause.
func (e *MalformedError) Unwrap() []error { return []error{ErrMalformedResponse, e.Err} }

// SnapshotError is a ring version refused: its placement did not hash to
// its fingerprint, or the placement core refused its contents. The
// client keeps routing on the version it held.
type SnapshotError struct {
	// Ring is the ring.
	Ring string
	// Version is the refused version (0 when the event did not say).
	Version uint64
	// Err is the cause: a *placement.FingerprintMismatchError, a
	// *placement.Error, or a *MalformedError for an undecodable event.
	Err error
}

// Error names the version and why.
func (e *SnapshotError) Error() string {
	return fmt.Sprintf("ring %s v%d refused: %v", e.Ring, e.Version, e.Err)
}

// Unwrap returns ErrSnapshotRefused and the cause.
func (e *SnapshotError) Unwrap() []error { return []error{ErrSnapshotRefused, e.Err} }

func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}
