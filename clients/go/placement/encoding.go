package placement

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// magic starts every canonical encoding: "RINGDPL", then format version 1 (9.1).
const magic = "RINGDPL\x01"

// flagRamped is flags bit 0: the set is ramped (2.2).
const flagRamped = 0x01

// appendHeader appends the header of 9.1: magic, codes, zone_aware,
// flags, replication factor and the node records in index order.
func appendHeader(dst []byte, a Algorithm, h Hash, zoneAware bool, replicationFactor int, active []Node, ramped bool) []byte {
	dst = append(dst, magic...)
	flags := byte(0)
	if ramped {
		flags = flagRamped
	}
	dst = append(dst, byte(a), byte(h), boolByte(zoneAware), flags)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(replicationFactor))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(active)))
	for _, n := range active {
		dst = append(dst, byte(len(n.ID)))
		dst = append(dst, n.ID...)
		// A zone is written only when it can affect placement.
		zone := ""
		if zoneAware {
			zone = n.Zone
		}
		dst = append(dst, byte(len(zone)))
		dst = append(dst, zone...)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n.Weight))
		if ramped {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n.Ramp))
		}
		if a.placesByAddress() {
			dst = append(dst, byte(len(n.Address)))
			dst = append(dst, n.Address...)
		}
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// fingerprintOf is SHA-256 of an encoding as 64 lowercase hex digits (9).
func fingerprintOf(encoding []byte) string {
	sum := sha256.Sum256(encoding)
	return hex.EncodeToString(sum[:])
}
