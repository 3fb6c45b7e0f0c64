// Package partition is ringd's partition test: three etcd members and two
// ringd instances, each in a network namespace of its own, cut apart in
// four ways (each twice) under writers and readers through both instances,
// with the whole history checked for linearizability by Porcupine.
//
// Run it as root, through .ci/partition, or here with
//
//	RINGD_BIN=/path/to/ringd go test -count=1 -v -timeout 10m ./...
//
// Files:
//
//	thresholds.go       the targets asserted, and the scenario's pacing
//	topology.go         names and addresses of the namespaces and links
//	netns.go            building the networks; cutting links and pairs
//	cleanup.go          removing everything on every way out
//	procs.go, etcd.go,  starting etcd and ringd inside the namespaces;
//	ringd.go            etcd's status through its JSON gateway
//	traffic.go          writers, readers, /readyz and etcd status pollers
//	record.go           what the traffic saw, on one clock
//	faults.go           the four faults and their schedule
//	episodes.go         one fault: hold, heal, convergence probes
//	analysis.go,        per-fault figures and the checks on them
//	figures.go,
//	checks.go
//	linearizability.go  the versions-as-a-register model for Porcupine
//	history.go          every change against the ring's history
//	partition_test.go   the run itself; model_test.go shows each check
//	                    failing on a history made to break it
//
// The networks, each a bridge in the test's namespace:
//
//	peer    10.77.1.0/24  e1 .11, e2 .12, e3 .13          (etcd peers only)
//	client  10.77.2.0/24  e1 .11, e2 .12, e3 .13, r1 .21, r2 .22, test .1
//	front   10.77.3.0/24  r1 .21, r2 .22 (ringd on :7420), test .1
//
// The leader cut takes the leader's peer link down; the instance cut and
// the flap take an instance's client link down; the split takes e1's peer
// link down and adds blackhole routes r1–e2, r1–e3 and r2–e1 (both ends).
// The front network is never cut, so the test always reaches both
// instances.
package partition
