package io.github.ringd.placement;

/**
 * A position on a circle (the key hash space, unsigned) and the id of the node it belongs to.
 *
 * @param position the point's place on the circle; compare with {@link Long#compareUnsigned}
 * @param id the owning node's id
 */
public record Point(long position, String id) {}
