package io.github.ringd.placement;

/** A node's lifecycle state (spec 2.2). Only active nodes own keys. */
public enum NodeState {
  /** Active nodes own keys. */
  ACTIVE("active"),
  /** Draining nodes are leaving: they own nothing. */
  DRAINING("draining"),
  /** Joining nodes are registered but not yet active: they own nothing. */
  JOINING("joining");

  private final String wireName;

  NodeState(String wireName) {
    this.wireName = wireName;
  }

  /** The state's name as the JSON writes it. */
  public String wireName() {
    return wireName;
  }

  @Override
  public String toString() {
    return wireName;
  }

  /**
   * The state named {@code name}.
   *
   * @throws PlacementException of reason {@link PlacementException.Reason#INVALID_STATE}
   */
  public static NodeState parse(String name) {
    for (NodeState s : values()) {
      if (s.wireName.equals(name)) {
        return s;
      }
    }
    throw new PlacementException(
        PlacementException.Reason.INVALID_STATE,
        "\"" + Strings.excerpt(name) + "\" is not one of active, draining, joining");
  }
}
