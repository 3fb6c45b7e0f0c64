package benchmarks

import (
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/buraksezer/consistent"
	"github.com/cespare/xxhash/v2"
	rendezvous "github.com/dgryski/go-rendezvous"
	"github.com/golang/groupcache/consistenthash"
	"github.com/ringd/ringd/clients/go/placement"
	stathat "stathat.com/c/consistent"
)

// Settings of the libraries, each its own default or the value its
// documentation or best-known user picks; the lookup cost depends on them
// only through the size of what is searched.
const (
	// groupcacheReplicas is groupcache's HTTPPool default (defaultReplicas).
	groupcacheReplicas = 50
	// buraksezerPartitions is a prime well above 1,000, so that every
	// member owns partitions at N = 1,000 (the default, 271, would leave
	// most of them empty); the library's other defaults are kept.
	buraksezerPartitions = 7919
)

// nodeNames are the n node ids every implementation places keys on.
func nodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cache-%04d.example.net:11211", i)
	}
	return names
}

// buildRingd builds a ringd placement of algorithm alg over nodes of
// weight 1 with the default config: ring 160 points per node over xxh3,
// maglev a 65,537-slot table, table 65,536 partitions of 3 replicas.
func buildRingd(tb testing.TB, alg placement.Algorithm, names []string) *placement.Placement {
	tb.Helper()
	nodes := make([]placement.Node, len(names))
	for i, id := range names {
		nodes[i] = placement.NewNode(id)
	}
	cfg := placement.DefaultConfig(alg)
	var stored *placement.Stored
	if alg == placement.Table {
		stored = &placement.Stored{TableRows: roundRobinTable(names, cfg)}
	}
	p, err := placement.Build(cfg, nodes, stored)
	if err != nil {
		tb.Fatalf("%s over %d nodes: %v", alg, len(names), err)
	}
	return p
}

// roundRobinTable is a table for equal-weight nodes: partition p's
// replicas are nodes p, p+1, … (mod n). Only the server computes tables
// (spec 5.6) and clients restore them, so the benchmark restores this
// one; a lookup reads one cell whatever the table holds, so its cost is
// the same as with the server's (the two are equally balanced here).
func roundRobinTable(names []string, cfg placement.Config) [][]string {
	r := min(cfg.ReplicationFactor, len(names))
	rows := make([][]string, cfg.Partitions)
	for p := range rows {
		row := make([]string, r)
		for j := range row {
			row[j] = names[(p+j)%len(names)]
		}
		rows[p] = row
	}
	return rows
}

// member is a node as buraksezer/consistent takes it.
type member string

// String is the member's name.
func (m member) String() string { return string(m) }

// xxhasher is buraksezer/consistent's Hasher over XXH64, as its README.
type xxhasher struct{}

// Sum64 hashes data with XXH64.
func (xxhasher) Sum64(data []byte) uint64 { return xxhash.Sum64(data) }

// buildBuraksezer is a buraksezer/consistent ring over names.
func buildBuraksezer(names []string) *consistent.Consistent {
	members := make([]consistent.Member, len(names))
	for i, n := range names {
		members[i] = member(n)
	}
	return consistent.New(members, consistent.Config{
		PartitionCount:    buraksezerPartitions,
		ReplicationFactor: consistent.DefaultReplicationFactor,
		Load:              consistent.DefaultLoad,
		Hasher:            xxhasher{},
	})
}

// buildRendezvous is go-redis's ring sharding: go-rendezvous over
// xxhash.Sum64String (go-redis's default ConsistentHash).
func buildRendezvous(names []string) *rendezvous.Rendezvous {
	return rendezvous.New(names, xxhash.Sum64String)
}

// buildStathat is a stathat/consistent circle with its default 20
// replicas per node.
func buildStathat(names []string) *stathat.Consistent {
	c := stathat.New()
	c.Set(names)
	return c
}

// buildGroupcache is groupcache's consistenthash.Map as HTTPPool makes
// it: 50 replicas, CRC-32 (a nil hash).
func buildGroupcache(names []string) *consistenthash.Map {
	m := consistenthash.New(groupcacheReplicas, crc32.ChecksumIEEE)
	m.Add(names...)
	return m
}
