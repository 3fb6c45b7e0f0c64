// Package ringd is the Go client of ringd, the service that serves
// consistent-hashing ring snapshots. Every client, in every language,
// places every key exactly as the server does.
//
// The placement core, which turns a ring version into owners and
// preference lists bit for bit as docs/placement-spec.md defines them, is
// package placement. The client API (fetching and watching snapshots)
// will live here.
package ringd
