/**
 * Jedis routed by ringd: {@link io.github.ringd.jedis.RingdJedis} hands out the pooled client of
 * the standalone redis-server of a key's ringd owner, following the ring.
 */
package io.github.ringd.jedis;
