package placement

import (
	"strconv"
	"testing"
)

// BenchmarkOwner times one lookup per algorithm over the vectors'
// thousand-node sets (go test -bench Owner -benchmem ./placement).
func BenchmarkOwner(b *testing.B) {
	for _, a := range Algorithms() {
		b.Run(a.String(), func(b *testing.B) {
			p := loadVector(b, vectorsDir+"/"+a.String()+"-nodes-1000.json").build(b)
			keys := make([][]byte, 1024)
			for i := range keys {
				keys[i] = []byte("user:" + strconv.Itoa(i*7919))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.Owner(keys[i&1023])
			}
		})
	}
}
