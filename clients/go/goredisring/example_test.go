package goredisring_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/goredisring"
)

// A go-redis Ring whose shards are the ring's active nodes and whose keys
// go to ringd's owner.
func ExampleNew() {
	c, err := ringd.NewClient([]string{"http://10.0.0.1:7420,http://10.0.0.2:7420"}, "sessions",
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
	s, err := goredisring.New(c, &redis.RingOptions{Password: os.Getenv("REDIS_PASSWORD")},
		goredisring.WithErrorHandler(func(err error) { log.Print(err) })) // nodes without an address
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	rdb := s.Ring()
	if err := rdb.Set(ctx, "session:42", "…", time.Hour).Err(); err != nil {
		log.Print(err)
	}
	fmt.Println("routing on version", s.Status().Version)
}

// Before the client's first version the Ring has no shard, and says so.
func ExampleSharding_Status() {
	c, err := ringd.NewClient([]string{"http://127.0.0.1:1"}, "sessions", ringd.WithAck(false))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := goredisring.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("version", s.Status().Version, "shards", len(s.Status().Shards))
	fmt.Println(s.Ring().Get(context.Background(), "session:42").Err())

	_, err = goredisring.New(c, &redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:6379"}})
	fmt.Println(errors.Is(err, goredisring.ErrInvalidOptions))
	// Output:
	// version 0 shards 0
	// redis: all ring shards are down
	// true
}
