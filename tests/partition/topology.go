package partition

import "fmt"

// Prefix starts the name of every namespace, link and directory the test
// makes, so that leftovers of a run that was killed can be found and
// removed (and nothing else is ever touched).
const Prefix = "rdpt-"

// The three networks, each a bridge in the test's own namespace:
//
//	peer   10.77.1.0/24  etcd members' peer traffic only
//	client 10.77.2.0/24  etcd client traffic: ringd and the test to etcd
//	front  10.77.3.0/24  the test's readers and writers to ringd
//
// The test process has 10.77.2.1 and 10.77.3.1 (on the client and front
// bridges); it never joins the peer network.
const (
	BridgePeer   = Prefix + "peer"
	BridgeClient = Prefix + "client"
	BridgeFront  = Prefix + "front"

	HostClientAddr = "10.77.2.1"
	HostFrontAddr  = "10.77.3.1"
)

// The interfaces inside a namespace.
const (
	InnerPeer   = "peer0"
	InnerClient = "client0"
	InnerFront  = "front0"
)

// EtcdMember is one etcd member: its own namespace, a peer interface and
// a client interface.
type EtcdMember struct {
	Index int // 0, 1, 2
	Name  string
}

// NS is the member's network namespace.
func (m EtcdMember) NS() string { return Prefix + m.Name }

// PeerAddr is the member's address on the peer network.
func (m EtcdMember) PeerAddr() string { return fmt.Sprintf("10.77.1.%d", 11+m.Index) }

// ClientAddr is the member's address on the client network.
func (m EtcdMember) ClientAddr() string { return fmt.Sprintf("10.77.2.%d", 11+m.Index) }

// PeerURL is where the other members reach it.
func (m EtcdMember) PeerURL() string { return "http://" + m.PeerAddr() + ":2380" }

// ClientURL is where ringd and the test reach it.
func (m EtcdMember) ClientURL() string { return "http://" + m.ClientAddr() + ":2379" }

// PeerLink is the host side of its peer veth: down, the member is cut
// from its peers and still reachable by clients.
func (m EtcdMember) PeerLink() string { return Prefix + m.Name + "p" }

// ClientLink is the host side of its client veth.
func (m EtcdMember) ClientLink() string { return Prefix + m.Name + "c" }

// Instance is one ringd instance: its own namespace, a client interface
// towards etcd and a front interface towards the test.
type Instance struct {
	Index int // 0, 1
	Name  string
}

// NS is the instance's network namespace.
func (r Instance) NS() string { return Prefix + r.Name }

// ClientAddr is its address on the client network, towards etcd.
func (r Instance) ClientAddr() string { return fmt.Sprintf("10.77.2.%d", 21+r.Index) }

// FrontAddr is its address on the front network, where it serves.
func (r Instance) FrontAddr() string { return fmt.Sprintf("10.77.3.%d", 21+r.Index) }

// URL is where the test's readers and writers reach it.
func (r Instance) URL() string { return "http://" + r.FrontAddr() + ":7420" }

// ClientLink is the host side of its client veth: down, the instance is
// cut from every etcd member while the test still reaches it.
func (r Instance) ClientLink() string { return Prefix + r.Name + "c" }

// FrontLink is the host side of its front veth; never cut.
func (r Instance) FrontLink() string { return Prefix + r.Name + "f" }

// Members are e1, e2 and e3.
var Members = []EtcdMember{{0, "e1"}, {1, "e2"}, {2, "e3"}}

// Instances are r1 and r2.
var Instances = []Instance{{0, "r1"}, {1, "r2"}}
