package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Traffic runs the writers and readers through both instances, the
// /readyz pollers and the etcd status pollers, recording everything.
type Traffic struct {
	rec     *Recorder
	runID   string
	writes  *http.Client // per-attempt timeout WriteTimeout
	reads   *http.Client // per-read timeout ReadTimeout
	polls   *http.Client // /readyz, etcd status: 1 s
	stopped int32        // writers and readers stop (writers finish their change)
	drainBy int64        // when stopped: the deadline for finishing, as a Clock time
	polling int32        // pollers stop when this drops to 0
	wg      sync.WaitGroup
	pollWG  sync.WaitGroup
}

// Client ids, as Porcupine and its visualization show them: the writers,
// then the readers, then one convergence prober per instance.
func writerClient(instance, k int) int { return instance*WritersPerInstance + k }
func readerClient(instance, k int) int {
	return len(Instances)*WritersPerInstance + instance*ReadersPerInstance + k
}
func proberClient(instance int) int {
	return len(Instances)*(WritersPerInstance+ReadersPerInstance) + instance
}

// NewTraffic prepares traffic recording into rec; runID makes this run's
// idempotency keys its own.
func NewTraffic(rec *Recorder, runID string) *Traffic {
	return &Traffic{
		rec:    rec,
		runID:  runID,
		writes: newHTTPClient(WriteTimeout),
		reads:  newHTTPClient(ReadTimeout),
		polls:  newHTTPClient(time.Second),
	}
}

// StartPolls starts polling /readyz of both instances and the status of
// every etcd member.
func (t *Traffic) StartPolls() {
	atomic.StoreInt32(&t.polling, 1)
	for _, r := range Instances {
		t.pollWG.Add(1)
		go t.readyPoller(r)
	}
	for _, m := range Members {
		t.pollWG.Add(1)
		go t.statusPoller(m)
	}
}

// Start starts the writers and readers.
func (t *Traffic) Start() {
	for _, r := range Instances {
		for k := 0; k < WritersPerInstance; k++ {
			t.wg.Add(1)
			go t.writer(writerClient(r.Index, k), r)
		}
		for k := 0; k < ReadersPerInstance; k++ {
			t.wg.Add(1)
			go t.reader(readerClient(r.Index, k), r, k*2)
		}
	}
}

// Stop stops the writers and readers; each writer first gets its change
// answered (for at most DrainLimit).
func (t *Traffic) Stop() {
	atomic.StoreInt64(&t.drainBy, int64(t.rec.Clock.Now()+DrainLimit))
	atomic.StoreInt32(&t.stopped, 1)
	t.wg.Wait()
}

// StopPolls stops the pollers.
func (t *Traffic) StopPolls() {
	atomic.StoreInt32(&t.polling, 0)
	t.pollWG.Wait()
}

func (t *Traffic) isStopped() bool { return atomic.LoadInt32(&t.stopped) != 0 }

// writer changes the ring through r until stopped: each change upserts
// one of its nodes with a new address, the change's own idempotency key,
// so every write makes exactly one version, which names it.
func (t *Traffic) writer(client int, r Instance) {
	defer t.wg.Done()
	defer Guard("writer")
	for seq := 0; !t.isStopped(); seq++ {
		op := t.rec.NewWrite(WriteOp{
			Client:   client,
			Instance: r.Index,
			Key:      fmt.Sprintf("%s-w%d-%d", t.runID, client, seq),
			Node:     fmt.Sprintf("w%d-n%d", client, seq%NodeSlots),
			Invoke:   t.rec.Clock.Now(),
		})
		t.write(op, r)
		time.Sleep(WritePause)
	}
}

// changeBody is the body of a writer's change.
func changeBody(node, address string) []byte {
	body, _ := json.Marshal(map[string]interface{}{
		"ops": []interface{}{map[string]interface{}{
			"op":   "upsert",
			"node": map[string]string{"id": node, "address": address},
		}},
	})
	return body
}

// write sends op until it is acknowledged, as a client would: the same
// Idempotency-Key on every try, after Retry-After on a 503, at once after
// a timeout. It gives up (outcome unknown) after WriteGiveUp, or when
// traffic stopped and the drain deadline passed.
func (t *Traffic) write(op *WriteOp, r Instance) {
	body := changeBody(op.Node, op.Key)
	for {
		a := Attempt{Op: op.ID, Instance: r.Index, Sent: t.rec.Clock.Now()}
		req, err := http.NewRequest("POST", r.URL()+"/v1/rings/"+Ring+"/changes", bytes.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", op.Key)
		resp, err := t.writes.Do(req)
		var answer struct {
			Changed  bool  `json:"changed"`
			Version  int64 `json:"version"`
			Replayed bool  `json:"replayed"`
		}
		var raw []byte
		if err == nil {
			raw, err = ioutil.ReadAll(resp.Body)
			resp.Body.Close()
			a.Status = resp.StatusCode
			a.RetryAfter = resp.Header.Get("Retry-After")
		}
		a.Done = t.rec.Clock.Now()
		if err != nil {
			a.Status = 0
			a.Err = err.Error()
		}
		switch {
		case a.Err != "":
		case a.Status == http.StatusOK:
			if err := json.Unmarshal(raw, &answer); err != nil || !answer.Changed || answer.Version < 2 {
				a.Err = fmt.Sprintf("200 without a change: %s", snippet(raw))
			} else {
				a.Version = answer.Version
			}
		case a.Status == http.StatusServiceUnavailable:
		default:
			a.Err = fmt.Sprintf("%d %s", a.Status, snippet(raw))
		}
		t.rec.AddAttempt(a)
		switch {
		case a.Status == http.StatusOK && a.Err == "":
			t.rec.Ack(op, a.Done, a.Version, answer.Replayed)
			return
		case a.Status != 0 && a.Status != http.StatusServiceUnavailable:
			t.rec.Refuse(op, a.Err)
			return
		}
		now := t.rec.Clock.Now()
		if now-op.Invoke > WriteGiveUp {
			return
		}
		if t.isStopped() && int64(now) > atomic.LoadInt64(&t.drainBy) {
			return
		}
		pause := 100 * time.Millisecond
		if a.Status == http.StatusServiceUnavailable {
			if s, err := strconv.Atoi(a.RetryAfter); err == nil && s >= 0 {
				pause = time.Duration(s) * time.Second
			}
		}
		time.Sleep(pause)
	}
}

// snippet is the start of a body, for messages.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// ReadPaths are the reads a reader cycles through, each of which says
// which version it answers from: the snapshot by its ETag (and its body's
// `version`, which must agree), a key lookup and the ownership by their
// `version`, the history by its newest entry, and the long-poll by its
// ETag (on 304 it names the version the ring is still at).
var ReadPaths = []string{"snapshot", "lookup", "ownership", "history", "longpoll"}

// reader reads the ring through r until stopped, cycling through
// ReadPaths from the offset-th.
func (t *Traffic) reader(client int, r Instance, offset int) {
	defer t.wg.Done()
	defer Guard("reader")
	var last int64 = 1
	for i := offset; !t.isStopped(); i++ {
		x := t.Read(client, r, ReadPaths[i%len(ReadPaths)], last, i)
		t.rec.AddRead(x)
		if x.OK() && x.Version > last {
			last = x.Version
		}
		time.Sleep(ReadPause)
	}
}

// etagVersion reads `"N"`.
func etagVersion(tag string) (int64, error) {
	v, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64)
	if err != nil || !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) {
		return 0, fmt.Errorf("ETag %q is not a quoted version", tag)
	}
	return v, nil
}

// Read does one read of path through r (after: the version the reader
// holds, for the long-poll; n varies the looked-up key) and says which
// version it answered.
func (t *Traffic) Read(client int, r Instance, path string, after int64, n int) ReadOp {
	url := r.URL() + "/v1/rings/" + Ring
	switch path {
	case "snapshot":
		url += "/snapshot"
	case "lookup":
		url += fmt.Sprintf("/lookup?key=k%d", n%100)
	case "ownership":
		url += "/ownership"
	case "history":
		url += "/history"
	case "longpoll":
		url += fmt.Sprintf("/snapshot?after=%d&wait=%s", after, LongPollWait)
	default:
		panic("unknown read path " + path)
	}
	x := ReadOp{Client: client, Instance: r.Index, Path: path, Invoke: t.rec.Clock.Now()}
	resp, err := t.reads.Get(url)
	var raw []byte
	if err == nil {
		raw, err = ioutil.ReadAll(resp.Body)
		resp.Body.Close()
	}
	x.Complete = t.rec.Clock.Now()
	if err != nil {
		x.Err = err.Error()
		return x
	}
	x.Status = resp.StatusCode
	x.Stale = resp.Header.Get("Ringd-Stale") == "true"
	if x.Status != http.StatusOK && !(path == "longpoll" && x.Status == http.StatusNotModified) {
		x.Err = fmt.Sprintf("%d %s", x.Status, snippet(raw))
		return x
	}
	v, err := readVersion(path, resp.Header, raw, after)
	if err != nil {
		x.Err = err.Error()
		return x
	}
	x.Version = v
	return x
}

// readVersion is the version a read answered, from where each path
// carries it.
func readVersion(path string, h http.Header, raw []byte, after int64) (int64, error) {
	var body struct {
		Version *int64 `json:"version"`
		Entries []struct {
			Version int64 `json:"version"`
		} `json:"entries"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			return 0, fmt.Errorf("%s: body: %v", path, err)
		}
	}
	switch path {
	case "snapshot", "longpoll":
		v, err := etagVersion(h.Get("ETag"))
		if err != nil {
			return 0, fmt.Errorf("%s: %v", path, err)
		}
		if len(raw) == 0 {
			// A long-poll's 304: the ring is still at `after`.
			if v != after {
				return 0, fmt.Errorf("%s: 304 with ETag %d, asked after %d", path, v, after)
			}
			return v, nil
		}
		if body.Version == nil || *body.Version != v {
			return 0, fmt.Errorf("%s: ETag %d, body version %v", path, v, body.Version)
		}
		return v, nil
	case "history":
		if len(body.Entries) == 0 {
			return 0, fmt.Errorf("history: no entries")
		}
		return body.Entries[len(body.Entries)-1].Version, nil
	default:
		if body.Version == nil {
			return 0, fmt.Errorf("%s: no version in %s", path, snippet(raw))
		}
		return *body.Version, nil
	}
}

// readyPoller asks r's /readyz every ReadyPollEvery.
func (t *Traffic) readyPoller(r Instance) {
	defer t.pollWG.Done()
	defer Guard("readyz poller")
	for atomic.LoadInt32(&t.polling) != 0 {
		p := ReadyPoll{Instance: r.Index, Sent: t.rec.Clock.Now()}
		resp, err := t.polls.Get(r.URL() + "/readyz")
		if err == nil {
			drain(resp)
			p.Status = resp.StatusCode
		}
		p.Done = t.rec.Clock.Now()
		t.rec.AddReady(p)
		time.Sleep(ReadyPollEvery)
	}
}

// statusPoller asks member m for its status every StatusPollEvery.
func (t *Traffic) statusPoller(m EtcdMember) {
	defer t.pollWG.Done()
	defer Guard("etcd status poller")
	for atomic.LoadInt32(&t.polling) != 0 {
		p := StatusPoll{Member: m.Index, Sent: t.rec.Clock.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		s, err := Status(ctx, t.polls, m)
		cancel()
		p.Done = t.rec.Clock.Now()
		p.OK, p.Status = err == nil, s
		t.rec.AddStatus(p)
		time.Sleep(StatusPollEvery)
	}
}

// Ready asks r's /readyz once.
func (t *Traffic) Ready(r Instance) bool {
	resp, err := t.polls.Get(r.URL() + "/readyz")
	if err != nil {
		return false
	}
	drain(resp)
	return resp.StatusCode == http.StatusOK
}
