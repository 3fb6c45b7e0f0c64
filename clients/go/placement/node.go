package placement

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Limits of a node's fields (spec 2.2).
const (
	// FullRamp is a node's ramp when it takes all of its weight.
	FullRamp = 65_536
	// MaxWeight is the largest node weight.
	MaxWeight = 1_000_000
	maxIDLen  = 128
	maxZone   = 64
	maxKeyLen = 255
	maxAddr   = 255
)

// State is a node's lifecycle state (2.2). Only active nodes own keys.
type State uint8

// The three states; the zero State is active.
const (
	// Active nodes own keys.
	Active State = iota
	// Draining nodes are leaving: they own nothing.
	Draining
	// Joining nodes are registered but not yet active: they own nothing.
	Joining
)

// String returns the state's name as the JSON writes it.
func (s State) String() string {
	switch s {
	case Active:
		return "active"
	case Draining:
		return "draining"
	case Joining:
		return "joining"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ParseState returns the state named name, or ErrInvalidState.
func ParseState(name string) (State, error) {
	switch name {
	case "active":
		return Active, nil
	case "draining":
		return Draining, nil
	case "joining":
		return Joining, nil
	}
	return 0, errorf(ErrInvalidState, "%q is not one of active, draining, joining", name)
}

// Node is a ring member as placement sees it (2.2). Make one with
// NewNode, which sets the defaults (weight 1, full ramp, active): a
// weight or ramp of 0 is refused, not defaulted.
type Node struct {
	// ID names the node: 1-128 bytes of [A-Za-z0-9._:-], starting with a
	// letter or digit.
	ID string
	// HashKey, when not "", is hashed instead of the id (its label), so a
	// replacement machine can take over the positions of the one it
	// replaces: 1-255 bytes of UTF-8 without control characters.
	HashKey string
	// Weight is 1..=1,000,000.
	Weight int
	// Zone is a failure domain, "" for none; same characters as an id,
	// 1-64 bytes.
	Zone string
	// State says whether the node owns keys.
	State State
	// Ramp is the parts per 65,536 of its weight the node takes (1..=65,536).
	Ramp int
	// Address is host:port, "" for none; it places only under nginx and
	// twemproxy. envoy_ring_hash and envoy_maglev need one on every
	// active node (an IP address and port, 5.10.4) but place by the label.
	Address string
}

// NewNode returns an active node of weight 1 at full ramp.
func NewNode(id string) Node {
	return Node{ID: id, Weight: 1, Ramp: FullRamp}
}

// Label is what is hashed to place the node: its HashKey if set, else its ID.
func (n *Node) Label() string {
	if n.HashKey != "" {
		return n.HashKey
	}
	return n.ID
}

// scaledWeight is weight × ramp, the weight in parts of 65,536 (2.2).
func (n *Node) scaledWeight() uint64 { return uint64(n.Weight) * uint64(n.Ramp) }

// Validate checks the node's own fields against spec 2.2, in the order
// id, hash_key, zone, weight, state, ramp, address.
func (n *Node) Validate() error {
	if err := checkID(n.ID); err != nil {
		return err
	}
	if n.HashKey != "" {
		if err := checkHashKey(n.HashKey); err != nil {
			return err
		}
	}
	if n.Zone != "" {
		if err := checkZone(n.Zone); err != nil {
			return err
		}
	}
	if err := checkWeight(int64(n.Weight)); err != nil {
		return err
	}
	if n.State > Joining {
		return errorf(ErrInvalidState, "node %s: state code %d", n.ID, n.State)
	}
	if err := checkRamp(int64(n.Ramp)); err != nil {
		return err
	}
	if n.Address != "" {
		return checkAddress(n.Address)
	}
	return nil
}

func checkID(id string) error {
	if id == "" {
		return errorf(ErrEmptyNodeID, "a node id must not be empty")
	}
	if len(id) > maxIDLen || !isName(id) {
		return errorf(ErrInvalidNodeID, "%q: 1-128 bytes of [A-Za-z0-9._:-], starting with a letter or digit", excerpt(id))
	}
	return nil
}

func checkZone(z string) error {
	if len(z) > maxZone || !isName(z) {
		return errorf(ErrInvalidZone, "%q: 1-64 bytes of [A-Za-z0-9._:-], starting with a letter or digit", excerpt(z))
	}
	return nil
}

// isName reports whether s is [A-Za-z0-9][A-Za-z0-9._:-]*, ASCII only.
func isName(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func checkHashKey(k string) error {
	if len(k) > maxKeyLen || !utf8.ValidString(k) || hasControl(k) {
		return errorf(ErrInvalidHashKey, "%q: 1-255 bytes of UTF-8, no control character", excerpt(k))
	}
	return nil
}

func checkAddress(a string) error {
	bad := len(a) > maxAddr || !utf8.ValidString(a)
	for _, r := range a {
		// unicode.IsSpace is Unicode's White_Space property, as Rust's
		// char::is_whitespace; unicode.IsControl is category Cc.
		bad = bad || unicode.IsControl(r) || unicode.IsSpace(r)
	}
	if bad {
		return errorf(ErrInvalidAddress, "%q: 1-255 bytes without spaces or control characters", excerpt(a))
	}
	return nil
}

// hasControl reports a rune of general category Cc (U+0000-U+001F,
// U+007F-U+009F).
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func checkWeight(w int64) error {
	if w < 1 || w > MaxWeight {
		return errorf(ErrWeightOutOfRange, "weight %d not in 1..=1000000", w)
	}
	return nil
}

func checkRamp(r int64) error {
	if r < 1 || r > FullRamp {
		return errorf(ErrRampOutOfRange, "ramp %d not in 1..=65536", r)
	}
	return nil
}

// excerpt shortens s for an error message, on a rune boundary.
func excerpt(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
