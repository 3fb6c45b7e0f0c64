package ringd

// Handoff is a key's owner in the version routed on and in the one
// applied before it, read in one atomic load (never a pair from two
// swaps). See Client.Handoff.
type Handoff struct {
	// OwnerNow is the owner now; "" before the first version or with no
	// active node.
	OwnerNow string
	// OwnerBefore is the owner in the version applied before; "" before a
	// second version, or when that version had no active node.
	OwnerBefore string
	// Version is the version routed on (0 for none).
	Version uint64
	// VersionBefore is the version applied before it (0 for none): after
	// the client skipped versions (a reset, a restart) it says which.
	VersionBefore uint64
}

// Moved says whether the key changed owner in the last change: then a
// miss on OwnerNow may be served by OwnerBefore, which still holds it.
func (h Handoff) Moved() bool { return h.OwnerBefore != "" && h.OwnerBefore != h.OwnerNow }

// Handoff answers key's owner now and before the last change, so that a
// cache can read a key that just moved through to its previous owner
// (and warm the new one) instead of sending every client's misses of the
// moved share to the backing store at once. Writes go to OwnerNow alone.
func (c *Client) Handoff(key []byte) Handoff {
	v := c.cur.Load()
	if v == nil {
		return Handoff{}
	}
	h := Handoff{Version: v.current.Version()}
	h.OwnerNow, _ = v.current.Placement.Owner(key)
	if v.previous != nil {
		h.VersionBefore = v.previous.Version()
		h.OwnerBefore, _ = v.previous.Placement.Owner(key)
	}
	return h
}
