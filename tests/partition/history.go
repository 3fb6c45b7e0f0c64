package partition

import (
	"encoding/json"
	"fmt"
	"io/ioutil"
	"net/http"
	"reflect"
	"sort"
)

// HistoryEntry is the part of one entry of GET /v1/rings/{ring}/history
// the check needs.
type HistoryEntry struct {
	Version        int64   `json:"version"`
	IdempotencyKey *string `json:"idempotency_key"`
	Ops            []struct {
		Op   string `json:"op"`
		Node *struct {
			ID      string  `json:"id"`
			Address *string `json:"address"`
		} `json:"node"`
	} `json:"ops"`
}

// getJSON GETs url and decodes a 200 answer; it says whether the answer
// was marked stale.
func getJSON(client *http.Client, url string, into interface{}) (bool, error) {
	resp, err := client.Get(url)
	if err != nil {
		return false, err
	}
	raw, err := ioutil.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, snippet(raw))
	}
	return resp.Header.Get("Ringd-Stale") == "true", json.Unmarshal(raw, into)
}

// FetchHistory reads the ring's whole history through inst.
func FetchHistory(client *http.Client, inst Instance) ([]HistoryEntry, error) {
	var h struct {
		Entries []HistoryEntry `json:"entries"`
	}
	stale, err := getJSON(client, inst.URL()+"/v1/rings/"+Ring+"/history", &h)
	if err == nil && stale {
		err = fmt.Errorf("%s answered the history marked stale", inst.Name)
	}
	return h.Entries, err
}

// FetchNodes reads the ring's latest snapshot through inst: its version
// and each node's address.
func FetchNodes(client *http.Client, inst Instance) (int64, map[string]string, error) {
	var s struct {
		Version int64 `json:"version"`
		Nodes   []struct {
			ID      string `json:"id"`
			Address string `json:"address"`
		} `json:"nodes"`
	}
	stale, err := getJSON(client, inst.URL()+"/v1/rings/"+Ring+"/snapshot", &s)
	if err == nil && stale {
		err = fmt.Errorf("%s answered the snapshot marked stale", inst.Name)
	}
	nodes := map[string]string{}
	for _, n := range s.Nodes {
		nodes[n.ID] = n.Address
	}
	return s.Version, nodes, err
}

// The history checks' names.
const (
	CheckExactlyOnce = "every change applied exactly once, at its acknowledged version"
	CheckSame        = "both instances hold the same history and snapshot"
)

// CheckHistory checks that the history holds exactly the writes: versions
// 1 to N without a gap, version 1 the ring's creation, every later version
// one write's change (its key, its node, its address, nothing else), each
// write's key at most once and an acknowledged write's at the version it
// was acknowledged with, each writer's changes in the order it made them;
// and that the snapshot's nodes are what the history's last change of
// each made them.
func CheckHistory(v *Violations, entries []HistoryEntry, nodesVersion int64, nodes map[string]string, writes []WriteOp) {
	byKey := map[string]WriteOp{}
	for _, w := range writes {
		byKey[w.Key] = w
	}
	applied := map[string]int64{}
	want := map[string]string{}
	for i, e := range entries {
		if e.Version != int64(i+1) {
			v.Add(CheckExactlyOnce, "history entry %d is version %d: versions are not 1, 2, 3, …", i, e.Version)
			return
		}
		if e.Version == 1 {
			if e.IdempotencyKey != nil {
				v.Add(CheckExactlyOnce, "version 1 (the creation) has idempotency key %q", *e.IdempotencyKey)
			}
			continue
		}
		if e.IdempotencyKey == nil {
			v.Add(CheckExactlyOnce, "version %d has no idempotency key: no writer made it", e.Version)
			continue
		}
		key := *e.IdempotencyKey
		w, ok := byKey[key]
		if !ok {
			v.Add(CheckExactlyOnce, "version %d has key %q, which no writer sent", e.Version, key)
			continue
		}
		if first, twice := applied[key]; twice {
			v.Add(CheckExactlyOnce, "key %s applied twice: versions %d and %d", key, first, e.Version)
			continue
		}
		applied[key] = e.Version
		if len(e.Ops) != 1 || e.Ops[0].Op != "upsert" || e.Ops[0].Node == nil ||
			e.Ops[0].Node.ID != w.Node || e.Ops[0].Node.Address == nil || *e.Ops[0].Node.Address != key {
			raw, _ := json.Marshal(e.Ops)
			v.Add(CheckExactlyOnce, "version %d (key %s) holds %s, not the upsert of %s with address %s", e.Version, key, raw, w.Node, key)
			continue
		}
		want[w.Node] = key
	}
	for _, w := range writes {
		got, ok := applied[w.Key]
		switch {
		case w.Acked && !ok:
			v.Add(CheckExactlyOnce, "%s acknowledged at version %d is not in the history (lost)", w.Key, w.Version)
		case w.Acked && got != w.Version:
			v.Add(CheckExactlyOnce, "%s acknowledged at version %d is version %d in the history", w.Key, w.Version, got)
		}
	}
	// Each writer's changes in the order it made them (each waits for the
	// one before to be acknowledged).
	byClient := map[int][]WriteOp{}
	for _, w := range writes {
		byClient[w.Client] = append(byClient[w.Client], w)
	}
	for c, ws := range byClient {
		sort.Slice(ws, func(i, j int) bool { return ws[i].ID < ws[j].ID })
		var last int64
		var lastKey string
		for _, w := range ws {
			got, ok := applied[w.Key]
			if !ok {
				continue
			}
			if got <= last {
				v.Add(CheckExactlyOnce, "writer %d: %s is version %d, before its earlier %s at version %d (reordered)", c, w.Key, got, lastKey, last)
			}
			last, lastKey = got, w.Key
		}
	}
	if n := int64(len(entries)); nodesVersion != n {
		v.Add(CheckExactlyOnce, "the snapshot is at version %d, the history ends at %d", nodesVersion, n)
	}
	if !reflect.DeepEqual(nodes, want) {
		v.Add(CheckExactlyOnce, "the snapshot's nodes and addresses %v are not what the history's changes made them, %v", nodes, want)
	}
}
