package placement

import "testing"

// Lookups must not allocate: clients call Owner on every request.
func TestOwnerDoesNotAllocate(t *testing.T) {
	files := []string{
		"ring-weighted", "ketama-weighted", "maglev-weighted", "jump-md5-holes",
		"rendezvous-weighted", "rendezvous-ramped", "rendezvous-single", "table-weighted",
		"nginx-weighted", "haproxy-weighted", "twemproxy-hash-tag", "envoy_ring_hash-weighted",
		"envoy_ring_hash-forty", "ring-no-active", "envoy_ring_hash-no-active",
		"envoy_maglev-weighted", "envoy_maglev-ramped", "envoy_maglev-forty", "envoy_maglev-no-active",
	}
	keys := [][]byte{[]byte("user:1234"), []byte(""), []byte("session/7f3c9a2e-5b1d-4c8e-9f00-0123456789ab")}
	for _, name := range files {
		p := loadVector(t, vectorsDir+"/"+name+".json").build(t)
		for _, key := range keys {
			s := string(key)
			allocs := testing.AllocsPerRun(200, func() {
				p.Owner(key)
				p.OwnerString(s)
				p.KeyHash(key)
			})
			if allocs != 0 {
				t.Errorf("%s: a lookup of %q allocates %v times", name, key, allocs)
			}
		}
	}
}

// A placement is read-only once built: lookups from several goroutines
// share it (go test -race checks it).
func TestConcurrentLookups(t *testing.T) {
	for _, name := range []string{"ring-zoned", "rendezvous-ramped", "jump-md5-holes", "table-weighted", "envoy_ring_hash-ramped", "envoy_maglev-zoned"} {
		p := loadVector(t, vectorsDir+"/"+name+".json").build(t)
		want := p.PreferenceList([]byte("k"), 3)
		done := make(chan []string)
		for g := 0; g < 4; g++ {
			go func() {
				var got []string
				for i := 0; i < 50; i++ {
					p.OwnerString("k")
					p.Ownership()
					got = p.PreferenceList([]byte("k"), 3)
				}
				done <- got
			}()
		}
		for g := 0; g < 4; g++ {
			if got := <-done; len(got) != len(want) || got[0] != want[0] {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
		}
	}
}
