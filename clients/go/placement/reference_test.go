package placement

import (
	"encoding/hex"
	"reflect"
	"strconv"
	"testing"
)

// Checks of the vector files that are not placement vectors: the shared
// twemproxy hashes and the results published by the original
// implementations (spec 12), which ringd reproduces.

func checkTwemproxyHashFile(t *testing.T, path string) {
	var file struct {
		Description string              `json:"description"`
		KeysHex     []string            `json:"keys_hex"`
		Hashes      map[string][]uint32 `json:"hashes"`
	}
	decodeStrict(t, path, &file)
	names := map[string]bool{}
	for _, h := range twemproxyHashes {
		names[h.String()] = true
	}
	for name := range file.Hashes {
		if !names[name] {
			t.Errorf("the file names %s, not a twemproxy hash", name)
		}
	}
	for _, h := range twemproxyHashes {
		want, ok := file.Hashes[h.String()]
		if !ok || len(want) != len(file.KeysHex) {
			t.Errorf("%s: %d values for %d keys", h, len(want), len(file.KeysHex))
			continue
		}
		for i, kh := range file.KeysHex {
			key, err := hex.DecodeString(kh)
			if err != nil {
				t.Fatal(err)
			}
			if got := hash32(h, key); got != want[i] {
				t.Errorf("%s(%s) = %d, want %d", h, kh, got, want[i])
			}
		}
	}
}

func checkLibketama(t *testing.T, path string) {
	var file struct {
		Source string `json:"source"`
		Notes  string `json:"notes"`
		Cases  []struct {
			Name    string `json:"name"`
			Servers []struct {
				Addr   string `json:"addr"`
				Memory int    `json:"memory"`
			} `json:"servers"`
			KsPerServer     []int  `json:"ks_per_server"`
			PointsPerServer []int  `json:"points_per_server"`
			NumPoints       int    `json:"numpoints"`
			LastPoint       uint64 `json:"last_point"`
			FirstPoints     []struct {
				Point uint64 `json:"point"`
				Addr  string `json:"addr"`
			} `json:"first_points"`
			Collisions []struct {
				Point              uint64   `json:"point"`
				PredecessorPoint   uint64   `json:"predecessor_point"`
				AddrsInSortedOrder []string `json:"addrs_in_sorted_order"`
				ProbeKey           string   `json:"probe_key"`
				ProbeAddr          string   `json:"probe_addr"`
			} `json:"collisions"`
			WrapKeys  []string `json:"wrap_keys"`
			ProbeKeys []string `json:"probe_keys"`
			Lookups   []struct {
				Key  string `json:"key"`
				Hash uint64 `json:"hash"`
				Addr string `json:"addr"`
			} `json:"lookups"`
		} `json:"cases"`
	}
	decodeStrict(t, path, &file)
	if len(file.Cases) != 6 {
		t.Errorf("%d cases, the Rust test expects 6", len(file.Cases))
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			nodes := make([]Node, len(c.Servers))
			var total uint64
			for i, s := range c.Servers {
				nodes[i] = NewNode(s.Addr)
				nodes[i].Weight = s.Memory
				total += uint64(s.Memory)
			}
			p, err := Build(DefaultConfig(Ketama), nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			points := p.Points()
			perNode := map[string]int{}
			for _, pt := range points {
				perNode[pt.ID]++
			}
			for i, s := range c.Servers {
				if d := ketamaDigestCount(uint64(s.Memory), total, len(c.Servers)); d != c.KsPerServer[i] {
					t.Errorf("%s: %d digests, want %d", s.Addr, d, c.KsPerServer[i])
				}
				if perNode[s.Addr] != c.PointsPerServer[i] {
					t.Errorf("%s: %d points, want %d", s.Addr, perNode[s.Addr], c.PointsPerServer[i])
				}
			}
			if len(points) != c.NumPoints || points[len(points)-1].Position != c.LastPoint {
				t.Fatalf("%d points ending at %d, want %d ending at %d", len(points), points[len(points)-1].Position, c.NumPoints, c.LastPoint)
			}
			for i, fp := range c.FirstPoints {
				if points[i] != (Point{fp.Point, fp.Addr}) {
					t.Errorf("point %d: %+v, want %+v", i, points[i], fp)
				}
			}
			for _, col := range c.Collisions {
				// Tied points in libketama's (stable qsort) order, after the
				// given predecessor; a probe hashing into that arc lands on
				// the first.
				var tied []string
				first := -1
				for i, pt := range points {
					if pt.Position == col.Point {
						if first < 0 {
							first = i
						}
						tied = append(tied, pt.ID)
					}
				}
				if !reflect.DeepEqual(tied, col.AddrsInSortedOrder) || first < 1 || points[first-1].Position != col.PredecessorPoint {
					t.Errorf("tie at %d: %v after %d", col.Point, tied, col.PredecessorPoint)
				}
				h := p.KeyHash([]byte(col.ProbeKey))
				if h <= col.PredecessorPoint || h > col.Point {
					t.Errorf("probe %s hashes to %d, outside (%d, %d]", col.ProbeKey, h, col.PredecessorPoint, col.Point)
				}
				if o, _ := p.OwnerString(col.ProbeKey); o != col.ProbeAddr {
					t.Errorf("probe %s: %s, want %s", col.ProbeKey, o, col.ProbeAddr)
				}
			}
			looked := map[string]bool{}
			for _, l := range c.Lookups {
				looked[l.Key] = true
				if h := p.KeyHash([]byte(l.Key)); h != l.Hash {
					t.Errorf("hash of %q: %d, want %d", l.Key, h, l.Hash)
				}
				if o, _ := p.OwnerString(l.Key); o != l.Addr {
					t.Errorf("owner of %q: %s, want %s", l.Key, o, l.Addr)
				}
			}
			for _, k := range c.WrapKeys {
				// Past the last point: wraps to the owner of the first.
				o, _ := p.OwnerString(k)
				if !looked[k] || p.KeyHash([]byte(k)) <= c.LastPoint || o != points[0].ID {
					t.Errorf("wrap key %s", k)
				}
			}
			for _, k := range c.ProbeKeys {
				if !looked[k] {
					t.Errorf("probe key %s is not looked up", k)
				}
			}
		})
	}
}

func checkEnvoyMaglev(t *testing.T, path string) {
	var file struct {
		Source string `json:"source"`
		Hash   string `json:"hash"`
		Cases  []struct {
			Name      string `json:"name"`
			TableSize int    `json:"table_size"`
			Hosts     []struct {
				Hashed string `json:"hashed"`
				Weight int    `json:"weight"`
			} `json:"hosts"`
			ExpectedTable []int `json:"expected_table"`
		} `json:"cases"`
	}
	decodeStrict(t, path, &file)
	if len(file.Cases) != 6 {
		t.Errorf("%d cases, the Rust test expects 6", len(file.Cases))
	}
	for _, c := range file.Cases {
		cfg := DefaultConfig(Maglev)
		cfg.TableSize = c.TableSize
		nodes := make([]Node, len(c.Hosts))
		for i, h := range c.Hosts {
			nodes[i] = NewNode(h.Hashed)
			nodes[i].Weight = h.Weight
		}
		p, err := Build(cfg, nodes, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		// Envoy's indices are positions in hosts as listed: map them to ids.
		want := make([]string, len(c.ExpectedTable))
		for i, h := range c.ExpectedTable {
			want[i] = c.Hosts[h].Hashed
		}
		if got := p.MaglevTable(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: table %v, want %v", c.Name, got, want)
		}
	}
}

func checkJumpReference(t *testing.T, path string) {
	var file struct {
		Source    string `json:"source"`
		Algorithm string `json:"algorithm"`
		Cases     []struct {
			Key      string `json:"key"` // a u64 as a decimal string (spec 0)
			Buckets  uint32 `json:"buckets"`
			Expected uint32 `json:"expected"`
		} `json:"cases"`
	}
	decodeStrict(t, path, &file)
	if len(file.Cases) < 100 {
		t.Errorf("%d cases, the Rust test expects at least 100", len(file.Cases))
	}
	found := false
	for _, c := range file.Cases {
		key, err := strconv.ParseUint(c.Key, 10, 64)
		if err != nil {
			t.Fatalf("key %q: %v", c.Key, err)
		}
		if got := JumpHash(key, c.Buckets); got != c.Expected {
			t.Errorf("jump(%d, %d) = %d, want %d", key, c.Buckets, got, c.Expected)
		}
		found = found || key == 256 && c.Buckets == 1024 && c.Expected == 520
	}
	if !found {
		t.Error("jump(256, 1024) = 520 is missing")
	}
}
