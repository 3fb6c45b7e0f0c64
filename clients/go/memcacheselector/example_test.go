package memcacheselector_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/memcacheselector"
)

// A gomemcache client that sends every key to ringd's owner.
func ExampleNew() {
	c, err := ringd.NewClient([]string{"http://10.0.0.1:7420,http://10.0.0.2:7420"}, "cache",
		ringd.WithToken(os.Getenv("RINGD_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ready(ctx); err != nil {
		log.Fatal(err)
	}
	mc := memcache.NewFromSelector(memcacheselector.New(c))
	defer mc.Close()
	err = mc.Set(&memcache.Item{Key: "user:42", Value: []byte("…")})
	if errors.Is(err, memcacheselector.ErrNoAddress) {
		log.Print(err) // the owner's node record has no address
	}
	it, err := mc.Get("user:42")
	if err == nil {
		fmt.Printf("%s\n", it.Value)
	}
}

// Before the client's first version there is no server to pick.
func ExampleSelector_PickServer() {
	c, err := ringd.NewClient([]string{"http://127.0.0.1:1"}, "cache", ringd.WithAck(false))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s := memcacheselector.New(c)
	_, err = s.PickServer("user:42")
	fmt.Println(s.Version(), errors.Is(err, memcache.ErrNoServers))
	// Output:
	// 0 true
}
