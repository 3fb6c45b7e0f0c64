package placement

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// decodeOwn decodes data against its own hash, so that only the decoder's
// checks can refuse it.
func decodeOwn(data []byte) (*Placement, error) { return Decode(data, sha(data)) }

// smallEncodings are the encodings of the vector files below limit
// bytes (the nodes-1000 files are left out before they are built).
func smallEncodings(t testing.TB, limit int) [][]byte {
	paths, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	var out [][]byte
	for _, path := range paths {
		if strings.Contains(path, "nodes-1000") {
			continue
		}
		if enc := loadVector(t, path).build(t).Encode(); len(enc) <= limit {
			out = append(out, enc)
		}
	}
	return out
}

func TestDecodeRefusesWhatNoPlacementEncodes(t *testing.T) {
	p := mustBuild(t, DefaultConfig(Jump), []Node{node("a", 1), node("b", 1), node("c", 2)}, nil)
	good := p.Encode()
	if _, err := decodeOwn(good); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(good, sha(nil)); !errors.Is(err, ErrFingerprintMismatch) {
		t.Errorf("a wrong fingerprint: %v", err)
	}
	for name, change := range map[string]func([]byte) []byte{
		"magic":              func(b []byte) []byte { b[0] = 'X'; return b },
		"version":            func(b []byte) []byte { b[7] = 2; return b },
		"algorithm":          func(b []byte) []byte { b[8] = 12; return b },
		"hash":               func(b []byte) []byte { b[9] = 99; return b },
		"hash not accepted":  func(b []byte) []byte { b[9] = byte(Sdbm); return b },
		"jump with xxh64":    func(b []byte) []byte { b[9] = byte(Xxh64); return b },
		"zone_aware":         func(b []byte) []byte { b[10] = 2; return b },
		"flags":              func(b []byte) []byte { b[11] = 2; return b },
		"ramped but no ramp": func(b []byte) []byte { b[11] = 1; return b },
		"replication 0":      func(b []byte) []byte { b[12] = 0; return b },
		"replication 65":     func(b []byte) []byte { b[12] = 65; return b },
		"ids out of order":   func(b []byte) []byte { b[21] = 'b'; return b },
		"bad id":             func(b []byte) []byte { b[21] = '-'; return b },
		"weight 0":           func(b []byte) []byte { b[23] = 0; return b },
		"a trailing byte":    func(b []byte) []byte { return append(b, 0) },
		"cut short":          func(b []byte) []byte { return b[:len(b)-1] },
		"bucket past nodes":  func(b []byte) []byte { b[len(b)-4] = 9; return b },
		"wrong bucket count": func(b []byte) []byte { b[len(b)-20] = 3; return b },
		"a trailing hole":    func(b []byte) []byte { copy(b[len(b)-4:], []byte{0xff, 0xff, 0xff, 0xff}); return b },
	} {
		b := change(append([]byte(nil), good...))
		if _, err := decodeOwn(b); !errors.Is(err, ErrInvalidEncoding) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDecodeNeverPanicsOnCutOrFlippedEncodings(t *testing.T) {
	for _, enc := range smallEncodings(t, 4096) {
		for n := 0; n < len(enc); n++ {
			if _, err := decodeOwn(enc[:n]); err == nil {
				t.Fatalf("a %d-byte prefix of a %d-byte encoding decoded", n, len(enc))
			}
		}
		for i := 0; i < len(enc); i += 1 + len(enc)/64 {
			b := append([]byte(nil), enc...)
			b[i] ^= 0x5a
			if p, err := decodeOwn(b); err == nil {
				// Some flips leave a valid encoding (a position in a
				// body): then it must be canonical.
				if sha(p.Encode()) != sha(b) {
					t.Fatalf("byte %d flipped decoded to something else", i)
				}
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, enc := range smallEncodings(f, 2048) {
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeOwn(data)
		if err != nil {
			return
		}
		// Whatever decodes answers lookups and re-encodes to itself.
		p.OwnerString("key")
		p.PreferenceList([]byte("key"), 3)
		p.Ownership()
		if sha(p.Encode()) != sha(data) {
			t.Fatal("not canonical")
		}
	})
}
