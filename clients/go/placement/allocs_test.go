package placement

import "testing"

// Lookups must not allocate: clients call Owner on every request.
func TestOwnerDoesNotAllocate(t *testing.T) {
	files := []string{
		"ring-weighted", "ketama-weighted", "maglev-weighted", "jump-md5-holes",
		"rendezvous-weighted", "rendezvous-ramped", "rendezvous-single", "table-weighted",
		"nginx-weighted", "haproxy-weighted", "twemproxy-hash-tag", "ring-no-active",
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
