//go:build race

package ringd

// raceEnabled: this test binary runs under the race detector, which
// slows the Go side several times over; the agreement test then places a
// tenth of its keys (see agreementScale).
const raceEnabled = true
