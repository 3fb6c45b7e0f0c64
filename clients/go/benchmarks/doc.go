// Package benchmarks times ringd's Go placement core against the Go
// consistent-hashing libraries people use instead of it: owner lookups at
// 10, 100 and 1,000 nodes, and the memory a 1,000-node placement holds;
// and the time from a write's response until a following Client routes
// on the version it made.
//
// It is a module of its own (its go.mod replaces the client module with
// ../) so that the libraries it compares against never become
// dependencies of github.com/ringd/ringd/clients/go. Everything is in its
// _test.go files; this package has no API. Results: RESULTS.md. The
// command in ./followers is the Go client's fleet for the reconnect-storm
// benchmark (benches/load/reconnect_storm), which spawns it.
//
//	go test -run '^$' -bench 'Owner|Build1000' -benchmem -count 5
//	go test -run '^$' -bench Propagation -benchtime 100x
package benchmarks
