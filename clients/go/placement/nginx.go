package placement

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
)

// nginxPointsPerWeight is nginx's 160 points per unit of weight (5.7).
const nginxPointsPerWeight = 160

// nginxHostPort splits an address as nginx splits a `server` to hash it:
// at the last ':' that only digits follow.
func nginxHostPort(address string) (host, port string, ok bool) {
	i := strings.LastIndexByte(address, ':')
	if i < 0 || i == len(address)-1 {
		return "", "", false
	}
	for _, c := range []byte(address[i+1:]) {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return address[:i], address[i+1:], true
}

// nginxAddressProblem says why address cannot be an nginx server, or ""
// (5.7): host:port with a decimal port 1..=65,535 and a host name, IPv4
// or bracketed IPv6 host, so nothing in it can end, open or comment out
// a directive; not `unix`, which nginx reads as a socket path.
func nginxAddressProblem(address string) string {
	host, port, ok := nginxHostPort(address)
	if !ok {
		return "nginx rings need `host:port`, with a decimal port"
	}
	if p, err := strconv.ParseUint(port, 10, 32); err != nil || len(port) > 5 || p < 1 || p > 65_535 {
		return "the port must be from 1 to 65535"
	}
	if host == "" || !(isHostName(host) || isBracketedIPv6(host)) {
		return "the host must be a host name, an IPv4 address or a bracketed IPv6 address"
	}
	if strings.EqualFold(host, "unix") {
		return "unix sockets are not supported"
	}
	return ""
}

// isHostName reports whether s is made of [A-Za-z0-9._-].
func isHostName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func isBracketedIPv6(s string) bool {
	if len(s) <= 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		hex := c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		if !hex && c != ':' && c != '.' {
			return false
		}
	}
	return true
}

// checkNginxAddresses is check 3a for nginx over the active nodes in id
// order: each address a server nginx takes, then no address twice (the
// smallest shared address is named, with its first two nodes by id).
func checkNginxAddresses(active []Node) error {
	for _, n := range active {
		if p := nginxAddressProblem(n.Address); p != "" {
			return errorf(ErrAddressNotServer, "node %s at %q: %s", n.ID, excerpt(n.Address), p)
		}
	}
	byAddress := slices.Clone(active)
	slices.SortStableFunc(byAddress, func(a, b Node) int { return strings.Compare(a.Address, b.Address) })
	for i := 1; i < len(byAddress); i++ {
		if a, b := byAddress[i-1], byAddress[i]; a.Address == b.Address {
			return errorf(ErrDuplicateAddress, "nodes %s and %s share the address %q", a.ID, b.ID, excerpt(a.Address))
		}
	}
	return nil
}

// buildNginx is nginx's circle (5.7): each node's 160 × weight chained
// CRC-32 points of host ‖ 0x00 ‖ port ‖ LE32(previous point), and of
// equal positions only the lowest node index's, as nginx keeps the first
// of equal points in server order.
func buildNginx(active []Node) *circle {
	var points []point
	var buf [4]byte
	for i, n := range active {
		host, port, ok := nginxHostPort(n.Address)
		if !ok {
			host, port = n.Address, "" // not reached: addresses are checked
		}
		base := crc32.Update(0, crc32.IEEETable, []byte(host))
		base = crc32.Update(base, crc32.IEEETable, []byte{0})
		base = crc32.Update(base, crc32.IEEETable, []byte(port))
		var prev uint32
		for k := 0; k < nginxPointsPerWeight*n.Weight; k++ {
			// Feeding CRC-32 in pieces equals feeding it at once (3.5).
			binary.LittleEndian.PutUint32(buf[:], prev)
			prev = crc32.Update(base, crc32.IEEETable, buf[:])
			points = append(points, point{uint64(prev), uint32(i)})
		}
	}
	slices.SortFunc(points, byPositionThenNode)
	points = slices.CompactFunc(points, func(a, b point) bool { return a.pos == b.pos })
	return &circle{newContinuum(points, 32)}
}
