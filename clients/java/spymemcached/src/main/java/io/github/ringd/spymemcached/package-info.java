/**
 * spymemcached routed by ringd: {@link io.github.ringd.spymemcached.RingdNodeLocator} names the
 * memcached of a key's ringd owner, {@link io.github.ringd.spymemcached.RingdConnectionFactory}
 * builds a {@code MemcachedClient} with it, and {@link io.github.ringd.spymemcached.RingdMemcached}
 * follows a ring whose addresses change.
 */
package io.github.ringd.spymemcached;
