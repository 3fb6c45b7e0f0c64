package ringd_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	ringd "github.com/ringd/ringd/clients/go"
)

// Following a ring: wait for the first verified version, then route with
// no network call.
func ExampleNewClient() {
	c, err := ringd.NewClient([]string{"http://10.0.0.1:7420,http://10.0.0.2:7420"}, "cache",
		ringd.WithToken(os.Getenv("RINGD_TOKEN")), // the read token is enough
		ringd.WithClientID("web-3"),
		ringd.WithObserver(func(e ringd.Event) {
			if e.Kind == ringd.EventRefused {
				log.Printf("ringd: version %d refused: %v", e.Version, e.Err)
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ready(ctx); err != nil {
		if errors.Is(err, ringd.ErrUnauthorized) {
			log.Fatal("ringd refused the token")
		}
		log.Fatal(err)
	}
	if node, ok := c.OwnerString("user:42"); ok {
		fmt.Println("user:42 lives on", node)
	}
	replicas := c.PreferenceList([]byte("user:42"), 3)
	fmt.Println(replicas)
}

// Reading a key that just moved through to its previous owner.
func ExampleClient_Handoff() {
	var c *ringd.Client // following a ring
	get := func(node, key string) (string, bool) { return "", false }
	set := func(node, key, value string) {}

	key := "user:42"
	h := c.Handoff([]byte(key))
	v, ok := get(h.OwnerNow, key)
	if !ok && h.Moved() {
		// A miss on a key the last change moved: its previous owner has it.
		if v, ok = get(h.OwnerBefore, key); ok {
			set(h.OwnerNow, key, v) // warm the new owner
		}
	}
	_ = v
}

// The bound of consistent hashing with bounded loads.
func ExampleBoundedLoad_Bound() {
	b, err := ringd.NewBoundedLoad(1.25)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Bound(99, 10)) // (99 + 1) / 10 × 1.25 = 12.5
	fmt.Println(b.Bound(0, 4))   // an idle cluster takes requests
	// Output:
	// 13
	// 1
}

// Keeping a node in a ring while the process serves.
func ExampleNewMember() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // cancelling releases the lease too
	m, err := ringd.NewMember(ctx, []string{"http://10.0.0.1:7420"}, "cache",
		ringd.NodeRecord{ID: "cache-7", Address: "10.0.0.7:11211"},
		ringd.WithToken(os.Getenv("RINGD_ADMIN_TOKEN")), ringd.WithLeaseTTL(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := m.WaitFor(wait, func(s ringd.MemberStatus) bool { return s.State.HoldsLease() }); err != nil {
		log.Fatal(err)
	}
	// … serve until asked to stop …
	if err := m.Leave(context.Background()); err != nil {
		log.Print(err) // the lease then expires by its TTL
	}
}
