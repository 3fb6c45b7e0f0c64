//go:build !race

package ringd

// raceEnabled: this test binary runs without the race detector.
const raceEnabled = false
