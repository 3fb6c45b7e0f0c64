// Package goredisring routes a go-redis v9 Ring (redis.Ring) by a ring
// that ringd coordinates: every key goes to the node ringd's placement
// names as its owner, and the Ring's shards follow the ring's versions.
//
// New builds the redis.Ring from RingOptions and a ringd.Client that
// follows the ring. It sets RingOptions.Addrs to the active nodes of the
// client's version, shard name = node id and address = the node's
// address (host:port, where its Redis listens), and
// RingOptions.NewConsistentHash to a hash that answers from ringd's
// placement of that same version. A goroutine then hands every version
// the client applies to Ring.SetAddrs. The package is a module of its own
// so that the core client module does not depend on go-redis.
//
// # One version at a time
//
// go-redis rebuilds its hash inside SetAddrs: it prepares the new shards,
// then under its own lock swaps in the shard map and calls
// NewConsistentHash with the names of the shards it holds, and its key
// lookups take that lock to read. The adapter records the version it is
// about to install before calling SetAddrs, and NewConsistentHash builds
// the hash from the version whose shard names it is given. So a command
// sees either the old shard map with the old version's hash, or the new
// map with the new version's hash, never a mix. go-redis's heartbeat also
// rebuilds the hash (with the shards it finds up) and may do so while a
// SetAddrs is under way, with the old shards: that hash is built from the
// old version when the shards include a node the new one lacks, else from
// the new one (the shards are then all nodes of both, so every name it
// answers has a shard), and SetAddrs replaces it a moment later. Versions
// are installed one at a time, in the order the client applies them.
//
// # Shards go-redis finds down, nodes without an address
//
// A hash never names a shard outside the set go-redis gave it, so a key
// never finds no shard. When the owner is a shard go-redis's heartbeat
// marks down, or a node without an address (which cannot be a shard: it
// is left out and reported, as a *NodeAddressError), the key goes to the
// next node of ringd's preference list for it that is a live shard; ""
// (go-redis's "all ring shards are down") only when none is. A table
// ring's preference list has only its replication_factor nodes. ringd's
// own membership (leases, draining) is what should move keys for good.
//
// # Hash tags
//
// go-redis hands the hash only the hash tag of a key that has one: the
// text between the first "{" and the next "}" ("user:{42}:cart" is placed
// as "42"). Such keys live on ringd's owner of the tag, which is what
// ringd's lookup answers for the tag.
package goredisring
