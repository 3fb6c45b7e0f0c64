package ringd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// maxBody bounds a plain answer (a snapshot of a 10,000-node ring is a
// few MB, a table at 2^20 partitions a few more), so a broken server
// cannot make the client allocate without end.
const maxBody = 256 << 20

// endpoints sends requests to a set of equivalent ringd servers: every
// instance in front of the same store answers the same. The last one that
// answered is tried first; the others follow in the order given.
type endpoints struct {
	urls    []string
	token   string
	http    *http.Client
	timeout time.Duration
	// preferred is shared with the copy withoutKeepAlive makes, so acks
	// and watches agree on which server answers.
	preferred *atomic.Int64
	// oneShot is the client withoutKeepAlive sends through: for the
	// library's own client, a clone of its transport (same TLS) with
	// keep-alives off; a client given with WithHTTPClient is used as it
	// is.
	oneShot *http.Client
	// closeConn sets Request.Close on every request (withoutKeepAlive).
	closeConn bool
}

// parseURLs splits comma-separated lists (as RINGD_ADDR is), trims, checks
// the scheme and drops a trailing slash.
func parseURLs(urls []string) ([]string, error) {
	var out []string
	for _, item := range urls {
		for _, u := range strings.Split(item, ",") {
			u = strings.TrimRight(strings.TrimSpace(u), "/")
			if u == "" {
				continue
			}
			rest, ok := strings.CutPrefix(u, "http://")
			if !ok {
				rest, ok = strings.CutPrefix(u, "https://")
			}
			if !ok || rest == "" || strings.ContainsAny(rest, " \t\r\n") {
				return nil, invalidOption("server URL %q: use http://host:port or https://host:port", u)
			}
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return nil, invalidOption("no server URL given")
	}
	return out, nil
}

func newEndpoints(urls []string, s *settings) (*endpoints, error) {
	parsed, err := parseURLs(urls)
	if err != nil {
		return nil, err
	}
	if s.tlsErr != nil {
		return nil, s.tlsErr
	}
	if s.requestTimeout <= 0 {
		return nil, invalidOption("the request timeout must be more than zero")
	}
	client, oneShot := s.httpClient, s.httpClient
	if client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if s.tls != nil {
			t.TLSClientConfig = s.tls
		}
		// Timeouts are per request (contexts), never on the client: a
		// watch stream stays open for hours.
		client = &http.Client{Transport: t}
		// The same settings (TLS, client certificate, proxy, dialer), no
		// pool: see withoutKeepAlive.
		once := t.Clone()
		once.DisableKeepAlives = true
		oneShot = &http.Client{Transport: once}
	}
	return &endpoints{
		urls: parsed, token: s.token, http: client, timeout: s.requestTimeout,
		preferred: new(atomic.Int64), oneShot: oneShot,
	}, nil
}

// withoutKeepAlive is the same servers (sharing which one is preferred)
// through connections closed as soon as each request is answered. It is
// for requests made about once a minute beside a watch: acks. On HTTP/1.1
// a following client's watch stream holds its connection, so each ack
// (after each applied version, and again every ack interval, 60 s by
// default) opens a second one, which a keep-alive pool would then keep
// open until ringd's 30 s header-read timeout closes it. Across a fleet
// that doubles the server's connections and descriptors: 10,000 watchers
// held 20,000, and a restarted instance ran out of descriptors while the
// fleet reconnected. A fresh connection a minute costs the client one
// handshake. Watches, long-polls (each reuses the connection of the one
// before), snapshot and table fetches, and a Member's renewals (no watch
// beside them) keep the pooled connections.
//
// Each request also carries Request.Close, so that a client given with
// WithHTTPClient, whose transport this package does not own, closes the
// ack's connection too: an *http.Transport honours it (it sends
// "Connection: close" and drops the connection after the answer; over
// HTTP/2 the request gets a connection of its own, closed after it).
func (e *endpoints) withoutKeepAlive() *endpoints {
	c := *e
	c.http, c.closeConn = e.oneShot, true
	return &c
}

// first is the server tried first: the one that answered last.
func (e *endpoints) first() string {
	return e.urls[int(e.preferred.Load())%len(e.urls)]
}

// demote makes the server after url the next one tried, if url is the
// preferred one; watchers that lost their stream on it move on.
func (e *endpoints) demote(url string) {
	for i, u := range e.urls {
		if u == url {
			e.preferred.CompareAndSwap(int64(i), int64((i+1)%len(e.urls)))
			return
		}
	}
}

// open sends a request to the preferred server, then to each other one
// while the failure says nothing about the request itself: no connection,
// or 502, 503, 504 (a 503 at-capacity included, so a watch refused by a
// full instance is tried on the others at once; only when the last one
// tried refuses too does its Retry-After hold the next attempt back). A
// request that reached a server but got no answer is tried elsewhere
// only if it is a GET, since it may have taken effect.
// It returns the open response for 2xx and 304, with the server that
// gave it; the caller closes its body. Other statuses are *APIError.
func (e *endpoints) open(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, string, error) {
	start := int(e.preferred.Load())
	var last error
	for i := range e.urls {
		idx := (start + i) % len(e.urls)
		server := e.urls[idx]
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, server+path, rd)
		if err != nil {
			return nil, "", &MalformedError{What: server + path, Err: err}
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if e.token != "" {
			req.Header.Set("Authorization", "Bearer "+e.token)
		}
		req.Close = e.closeConn
		resp, err := e.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			last = &UnreachableError{URLs: e.urls, Err: err}
			if method == http.MethodGet || isDialError(err) {
				continue
			}
			return nil, "", last
		}
		if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotModified {
			e.preferred.Store(int64(idx))
			return resp, server, nil
		}
		apiErr := problemOf(resp, server+path)
		if resp.StatusCode >= 502 && resp.StatusCode <= 504 {
			last = apiErr
			continue
		}
		e.preferred.Store(int64(idx))
		return nil, server, apiErr
	}
	return nil, "", last
}

// isDialError says whether err happened before the request could be sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// problemOf turns an error response into an *APIError and closes it.
func problemOf(resp *http.Response, url string) *APIError {
	defer resp.Body.Close()
	e := &APIError{Status: resp.StatusCode, URL: url}
	e.retryAfter, e.hasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Field  string `json:"field"`
	}
	if json.Unmarshal(raw, &p) == nil && strings.HasPrefix(p.Type, "urn:") {
		e.Type, e.Title, e.Detail, e.Field = p.Type, p.Title, p.Detail, p.Field
	}
	return e
}

// answer is a whole response read into memory.
type answer struct {
	status int
	header http.Header
	body   []byte
	server string
}

// call is open with the request time limit (timeout, or the endpoints'
// own when 0), reading the whole body.
func (e *endpoints) call(ctx context.Context, method, path string, body []byte, header http.Header, timeout time.Duration) (answer, error) {
	if timeout == 0 {
		timeout = e.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, server, err := e.open(ctx, method, path, body, header)
	if err != nil {
		return answer{server: server}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err == nil && len(raw) > maxBody {
		err = fmt.Errorf("body over %d bytes", maxBody)
	}
	if err != nil {
		return answer{server: server}, &MalformedError{What: server + path, Err: err}
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: raw, server: server}, nil
}

// postJSON sends v as JSON and decodes the answer into out (if not nil).
func (e *endpoints) sendJSON(ctx context.Context, method, path string, v, out any, timeout time.Duration) (string, error) {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return "", err
		}
	}
	a, err := e.call(ctx, method, path, body, nil, timeout)
	if err != nil {
		return a.server, err
	}
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			return a.server, &MalformedError{What: a.server + path, Err: err}
		}
	}
	return a.server, nil
}
