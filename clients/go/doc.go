// Package ringd is the Go client of ringd, the service that serves
// consistent-hashing ring snapshots. Every client, in every language,
// places every key exactly as the server does.
//
// A Client follows one ring: it watches it over a Server-Sent Events
// stream (resuming with Last-Event-ID after any break), or long-polls
// when streams cannot get through; it fails over between equivalent
// servers with jittered backoff, and waits about as long as a refusing
// server's Retry-After asks (see WithBackoff); it rebuilds each
// version's placement and refuses any whose fingerprint does not match;
// it swaps verified versions in atomically, so lookups never lock and
// never touch the network; and it acks each version it routes on.
//
//	c, err := ringd.NewClient([]string{"http://10.0.0.1:7420", "http://10.0.0.2:7420"}, "cache",
//		ringd.WithToken(os.Getenv("RINGD_TOKEN")))
//	if err != nil { … }
//	defer c.Close()
//	if err := c.Ready(ctx); err != nil { … } // the first verified version
//	owner, ok := c.OwnerString("user:42")
//
// A Member keeps a node in a ring with a lease: it registers, renews,
// registers again after a lost lease, and releases on Leave.
//
// Errors match the sentinels of this package with errors.Is
// (ErrUnauthorized, ErrSnapshotRefused, …) and carry details for
// errors.As (*APIError, *SnapshotError, …); a refused snapshot also
// matches its placement kind (placement.ErrFingerprintMismatch).
//
// The placement core, which turns a ring version into owners and
// preference lists bit for bit as docs/placement-spec.md defines them, is
// package placement.
package ringd
