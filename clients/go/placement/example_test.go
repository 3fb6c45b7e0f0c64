package placement_test

import (
	"fmt"
	"log"

	"github.com/ringd/ringd/clients/go/placement"
)

// Placing keys without a server: a three-node ring built from its config
// and nodes places every key as ringd's POST …/lookup does for the same
// ring, and its fingerprint is the one ringd's snapshot would carry.
func ExampleBuild() {
	nodes := []placement.Node{
		placement.NewNode("cache-a"),
		placement.NewNode("cache-b"),
		placement.NewNode("cache-c"),
	}
	nodes[2].Weight = 2 // twice the keys of the others
	p, err := placement.Build(placement.DefaultConfig(placement.Ring), nodes, nil)
	if err != nil {
		log.Fatal(err)
	}
	owner, _ := p.OwnerString("user:42")
	fmt.Println("user:42 on", owner)
	fmt.Println("replicas", p.PreferenceList([]byte("user:42"), 2))
	fmt.Println("fingerprint", p.Fingerprint()[:16])
	// Output:
	// user:42 on cache-a
	// replicas [cache-a cache-c]
	// fingerprint 06430258a95db060
}
