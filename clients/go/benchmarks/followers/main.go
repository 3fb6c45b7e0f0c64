// Command followers is the Go client's fleet for the reconnect-storm
// benchmark (benches/load/reconnect_storm): N followers of ringd rings in
// one process, each a ringd.Client as an application builds one.
//
//	followers --url http://127.0.0.1:PORT --rings bench-000,bench-001 --followers N --protocol sse|long-poll
//
// Follower i follows ring rings[i mod len(rings)]. All N clients are
// started at once, each with the library's default settings (backoff
// 100 ms doubling to 10 s, acks on, the default client id, its own HTTP
// transport as the library makes it) but for the watch mode: WatchAuto for sse (the default: streams, long-polls where
// streams cannot get through), WatchLongPoll for long-poll.
//
// For every version follower i applies (its EventApplied, the moment
// from which its lookups use the version) the program writes the line
// "<i> <version>\n" to stdout; lines are written as they arrive, at most
// a few milliseconds late. Nothing else goes to stdout; diagnostics go to
// stderr. It runs until killed or until stdin reaches EOF.
//
// Build it with `go build -o /tmp/go-followers ./followers` in
// clients/go/benchmarks.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	ringd "github.com/ringd/ringd/clients/go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "followers:", err)
		os.Exit(2)
	}
}

func run() error {
	url := flag.String("url", "", "the ringd server, http://127.0.0.1:PORT")
	ringList := flag.String("rings", "", "comma-separated rings; follower i follows ring i mod R")
	n := flag.Int("followers", 0, "how many followers")
	protocol := flag.String("protocol", "sse", "sse (WatchAuto, the default mode) or long-poll (WatchLongPoll)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	var rings []string
	for _, r := range strings.Split(*ringList, ",") {
		if r = strings.TrimSpace(r); r != "" {
			rings = append(rings, r)
		}
	}
	var mode ringd.WatchMode
	switch *protocol {
	case "sse":
		mode = ringd.WatchAuto
	case "long-poll":
		mode = ringd.WatchLongPoll
	default:
		return fmt.Errorf("--protocol is sse or long-poll, not %q", *protocol)
	}
	switch {
	case *url == "":
		return errors.New("--url is required")
	case len(rings) == 0:
		return errors.New("--rings names no ring")
	case *n <= 0:
		return errors.New("--followers must be at least 1")
	}

	out := newLineWriter(os.Stdout)
	go out.run()

	// Each follower is a Client as an application makes one: the
	// library's defaults, its own transport as the library creates it (no
	// WithHTTPClient; the library does not ask for one shared between
	// Clients). Its watch holds one connection; the library sends its
	// acks through connections it closes once answered, so the fleet
	// holds one server connection per follower, not two.
	clients := make([]*ringd.Client, *n)
	for i := range clients {
		c, err := ringd.NewClient([]string{*url}, rings[i%len(rings)],
			ringd.WithWatchMode(mode),
			ringd.WithObserver(func(e ringd.Event) {
				if e.Kind == ringd.EventApplied {
					out.add(i, e.Version)
				}
			}))
		if err != nil {
			return fmt.Errorf("follower %d: %w", i, err)
		}
		clients[i] = c
	}
	fmt.Fprintf(os.Stderr, "followers: %d clients of %d rings on %s (%s)\n", *n, len(rings), *url, *protocol)
	go report(clients)

	// Until stdin reaches EOF (the driver went away) or a signal; SIGKILL
	// needs no handling.
	done := make(chan string, 2)
	go func() {
		_, err := io.Copy(io.Discard, os.Stdin)
		if err != nil {
			done <- "stdin: " + err.Error()
			return
		}
		done <- "stdin closed"
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { done <- (<-sig).String() }()
	why := <-done
	fmt.Fprintf(os.Stderr, "followers: stopping (%s)\n", why)
	// The lines already reported go out; the clients are not closed one
	// by one (10,000 of them would delay the exit for nothing): the
	// process ends and takes their connections with it.
	out.flush()
	return nil
}

// report writes the fleet's counters to stderr every 10 s while they
// change, for the driver's log.
func report(clients []*ringd.Client) {
	type counters struct {
		connected                                   int
		applied, refused, reconnects, acks, ackFail uint64
	}
	start := time.Now()
	var last counters
	for range time.Tick(10 * time.Second) {
		var sum counters
		for _, c := range clients {
			st := c.Status()
			sum.applied += st.Applied
			sum.refused += st.Refused
			sum.reconnects += st.Reconnects
			sum.acks += st.Acks
			sum.ackFail += st.AckFailures
			if st.Transport != ringd.Connecting {
				sum.connected++
			}
		}
		if sum == last {
			continue
		}
		last = sum
		fmt.Fprintf(os.Stderr, "followers: %.0fs: %d connected, versions applied %d, refused %d, reconnects %d, acks %d, ack failures %d\n",
			time.Since(start).Seconds(), sum.connected, sum.applied, sum.refused, sum.reconnects, sum.acks, sum.ackFail)
	}
}

// lineWriter collects "<i> <version>" lines from the clients' observers,
// which must not block, and writes whatever has gathered in one write
// as soon as the writer is free: a line waits no longer than the write
// before it.
type lineWriter struct {
	w       io.Writer
	mu      sync.Mutex
	pending []byte
	wake    chan struct{} // capacity 1: a write is due
	writing sync.Mutex    // held by a write in progress
	failed  bool
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, wake: make(chan struct{}, 1), pending: make([]byte, 0, 64<<10)}
}

// add queues the line for follower i and version v; it never blocks on
// the output.
func (l *lineWriter) add(i int, v uint64) {
	l.mu.Lock()
	l.pending = strconv.AppendInt(l.pending, int64(i), 10)
	l.pending = append(l.pending, ' ')
	l.pending = strconv.AppendUint(l.pending, v, 10)
	l.pending = append(l.pending, '\n')
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // a write is already due; it takes this line too
	}
}

func (l *lineWriter) run() {
	for range l.wake {
		l.flush()
	}
}

// flush writes every line gathered so far.
func (l *lineWriter) flush() {
	l.writing.Lock()
	defer l.writing.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = make([]byte, 0, max(cap(batch), 4096))
	l.mu.Unlock()
	if len(batch) == 0 || l.failed {
		return
	}
	if _, err := l.w.Write(batch); err != nil {
		// The driver is gone: nothing more can be reported. Stay up until
		// stdin closes or a signal, as the contract says.
		l.failed = true
		fmt.Fprintln(os.Stderr, "followers: writing stdout:", err)
	}
}
