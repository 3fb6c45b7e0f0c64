package ringd

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// socketsOf counts the open sockets of process pid, from its descriptor
// table (the links that read "socket:[inode]").
func socketsOf(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the server's descriptors: %v", err)
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// waitSockets waits until the server holds exactly want sockets, and
// fails naming what it holds after d.
func waitSockets(t *testing.T, pid, want int, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := socketsOf(t, pid)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the server holds %d sockets after %v, want %d", what, got, d, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAFollowingClientHoldsOneConnectionOnceItHasAcked checks that a
// following Client keeps one connection to the server, its watch's,
// once it has acked: each ack's connection is closed as soon as it is
// answered. A keep-alive pool would keep it open beside the watch until
// ringd's 30 s header-read timeout, so a fleet would hold twice its size
// in server sockets. The server's sockets are counted from
// /proc/<pid>/fd; the test's own requests keep no connection open (their
// transport has keep-alives off), so "before" is the listener alone.
// With the default settings (a stream), long-polling (each long-poll
// reuses the connection of the one before), and with an http.Client of
// the application's own (WithHTTPClient: acks carry Request.Close).
func TestAFollowingClientHoldsOneConnectionOnceItHasAcked(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count sockets in")
	}
	cases := []struct {
		name string
		opts []Option
	}{
		{"defaults", nil},
		{"long-poll", []Option{WithWatchMode(WatchLongPoll)}},
		{"own http.Client", []Option{WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			pid := s.cmd.Process.Pid
			listening := socketsOf(t, pid)
			noKeepAlive := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			a := api{t: t, base: s.URL, ring: "r", hc: noKeepAlive}
			a.create(map[string]any{})
			a.change(upsert("a", 1), upsert("b", 1))
			waitSockets(t, pid, listening, 10*time.Second, "the test's own requests closed")
			before := listening

			c, err := NewClient([]string{s.URL}, "r", append([]Option{WithClientID("fleet-member")}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Two versions, each followed and acked: the first ack's
			// connection must not stay open for the second to reuse either.
			for range 2 {
				v := a.change(upsert(fmt.Sprintf("n%d", time.Now().UnixNano()), 1))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				st, err := c.WaitFor(ctx, func(s Status) bool { return s.Version >= v && s.Acked >= v })
				cancel()
				if err != nil {
					t.Fatalf("following and acking v%d: %v (status %+v)", v, err, st)
				}
				waitFor(t, fmt.Sprintf("GET …/clients to list the client at v%d", v), 10*time.Second, func() bool {
					list := a.do("GET", "/clients", nil, 200)["clients"].([]any)
					return len(list) == 1 && list[0].(map[string]any)["client_id"] == "fleet-member" &&
						list[0].(map[string]any)["version"] == float64(v)
				})
				// The ack's connection closes once answered; the watch's (or
				// the parked long-poll's) stays. Kept alive, the ack's would
				// stay for 30 s: well past this deadline.
				waitSockets(t, pid, before+1, 10*time.Second, fmt.Sprintf("one client acked at v%d", v))
				// And it stays so: nothing reopens a second connection.
				time.Sleep(300 * time.Millisecond)
				if got := socketsOf(t, pid); got != before+1 {
					t.Fatalf("v%d: the server holds %d sockets for one client, want 1", v, got-before)
				}
				if st := c.Status(); st.Transport == Connecting {
					t.Fatalf("v%d: the client is not connected: %+v", v, st)
				}
			}
		})
	}
}
