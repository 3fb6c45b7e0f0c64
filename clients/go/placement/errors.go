package placement

import "fmt"

// Kind names why the placement core refused an input. Its text is the name
// of the Rust PlacementError variant the server reports for the same input
// (spec 2.4), so a refusal can be matched across languages. A Kind is also
// an error, so each constant is a sentinel usable with errors.Is:
//
//	if errors.Is(err, placement.ErrDuplicateNodeID) { … }
type Kind string

// Error returns the kind's name.
func (k Kind) Error() string { return string(k) }

// The kinds of spec 2.4 that a client can meet, plus a few of its own
// (ErrInvalidState, ErrInvalidJSON, ErrInvalidSnapshot,
// ErrFingerprintMismatch, ErrTableRequired), which the server reports while
// parsing JSON or never needs.
const (
	// ErrEmptyNodeID: a node id is the empty string.
	ErrEmptyNodeID Kind = "EmptyNodeId"
	// ErrInvalidNodeID: a node id too long, or with a bad character.
	ErrInvalidNodeID Kind = "InvalidNodeId"
	// ErrDuplicateNodeID: two nodes share an id.
	ErrDuplicateNodeID Kind = "DuplicateNodeId"
	// ErrInvalidHashKey: a hash_key empty, over 255 bytes, or with a control character.
	ErrInvalidHashKey Kind = "InvalidHashKey"
	// ErrInvalidZone: a zone empty, over 64 bytes, or with a bad character.
	ErrInvalidZone Kind = "InvalidZone"
	// ErrWeightOutOfRange: a weight of 0 or over 1,000,000.
	ErrWeightOutOfRange Kind = "WeightOutOfRange"
	// ErrRampOutOfRange: a ramp of 0 or over 65,536.
	ErrRampOutOfRange Kind = "RampOutOfRange"
	// ErrInvalidAddress: an address that breaks spec 2.2's rule.
	ErrInvalidAddress Kind = "InvalidAddress"
	// ErrInvalidState: a node state other than active, draining or joining.
	ErrInvalidState Kind = "InvalidState"
	// ErrUnknownAlgorithm: an algorithm name not in spec 2.1.
	ErrUnknownAlgorithm Kind = "UnknownAlgorithm"
	// ErrUnknownHash: a hash name not in spec 2.1.
	ErrUnknownHash Kind = "UnknownHash"
	// ErrHashNotSupported: ketama with a hash other than md5.
	ErrHashNotSupported Kind = "HashNotSupported"
	// ErrHashNotAccepted: a hash the algorithm does not take.
	ErrHashNotAccepted Kind = "HashNotAccepted"
	// ErrAvalancheNotSupported: avalanche on under an algorithm other than haproxy.
	ErrAvalancheNotSupported Kind = "AvalancheNotSupported"
	// ErrInvalidHashTag: a hash_tag that is not two allowed characters.
	ErrInvalidHashTag Kind = "InvalidHashTag"
	// ErrHashTagNotSupported: a hash_tag under an algorithm other than twemproxy.
	ErrHashTagNotSupported Kind = "HashTagNotSupported"
	// ErrVnodesOutOfRange: vnodes_per_weight outside 1..=10,000.
	ErrVnodesOutOfRange Kind = "VnodesOutOfRange"
	// ErrReplicationOutOfRange: replication_factor outside 1..=64.
	ErrReplicationOutOfRange Kind = "ReplicationOutOfRange"
	// ErrPartitionsOutOfRange: partitions not a power of two in 2^8..=2^20.
	ErrPartitionsOutOfRange Kind = "PartitionsOutOfRange"
	// ErrTableSizeOutOfRange: a maglev or envoy_maglev table_size below
	// 2, above 2^24 (above 5,000,011 for envoy_maglev) or below the
	// active node count.
	ErrTableSizeOutOfRange Kind = "TableSizeOutOfRange"
	// ErrTableSizeNotPrime: a maglev or envoy_maglev table_size that is
	// not prime.
	ErrTableSizeNotPrime Kind = "TableSizeNotPrime"
	// ErrMissingZone: zone_aware and an active node without a zone.
	ErrMissingZone Kind = "MissingZone"
	// ErrRingSizeOutOfRange: a minimum_ring_size or maximum_ring_size
	// outside 1..=2^23.
	ErrRingSizeOutOfRange Kind = "RingSizeOutOfRange"
	// ErrRingSizesInverted: an envoy_ring_hash minimum_ring_size above its
	// maximum_ring_size.
	ErrRingSizesInverted Kind = "RingSizesInverted"
	// ErrMissingAddress: an algorithm that needs addresses (nginx,
	// twemproxy, envoy_ring_hash, envoy_maglev) and an active node
	// without one.
	ErrMissingAddress Kind = "MissingAddress"
	// ErrAddressNotServer: an address the proxy would not take as a
	// server (for envoy_ring_hash and envoy_maglev, one that is not a
	// canonical IP:port).
	ErrAddressNotServer Kind = "AddressNotServer"
	// ErrDuplicateAddress: two active nginx, envoy_ring_hash or
	// envoy_maglev nodes share an address.
	ErrDuplicateAddress Kind = "DuplicateAddress"
	// ErrEndpointKeyTaken: two active envoy_ring_hash or envoy_maglev
	// nodes with one label, which Envoy and gRPC would hash alike.
	ErrEndpointKeyTaken Kind = "EndpointKeyTaken"
	// ErrWeightShareTooSmall: an active envoy_ring_hash or envoy_maglev
	// node whose share of the endpoints' 2^31 weight rounds to 0.
	ErrWeightShareTooSmall Kind = "WeightShareTooSmall"
	// ErrInvalidServerName: a twemproxy hash_key nutcracker could not read back.
	ErrInvalidServerName Kind = "InvalidServerName"
	// ErrServerNameTaken: two active twemproxy nodes with one server name.
	ErrServerNameTaken Kind = "ServerNameTaken"
	// ErrRampNotSupported: a ramp below full under an algorithm that takes none.
	ErrRampNotSupported Kind = "RampNotSupported"
	// ErrWeightTooHighForProxy: a haproxy node above HAProxy's weight 256.
	ErrWeightTooHighForProxy Kind = "WeightTooHighForProxy"
	// ErrTooManyPoints: the point cap of spec 2.4 exceeded.
	ErrTooManyPoints Kind = "TooManyPoints"
	// ErrTableTooLarge: partitions × replicas above the cap of spec 2.4.
	ErrTableTooLarge Kind = "TableTooLarge"
	// ErrInvalidServerIDs: haproxy server ids that do not fit the nodes.
	ErrInvalidServerIDs Kind = "InvalidServerIds"
	// ErrInvalidBucketOrder: a jump bucket order that does not fit the nodes.
	ErrInvalidBucketOrder Kind = "InvalidBucketOrder"
	// ErrInvalidTable: a stored table or moves that do not fit the config and nodes.
	ErrInvalidTable Kind = "InvalidTable"
	// ErrInvalidEncoding: a canonical encoding that does not decode or is not canonical.
	ErrInvalidEncoding Kind = "InvalidEncoding"
	// ErrInvalidJSON: a document that is not JSON, or a field of the
	// wrong JSON type (the server refuses both while parsing).
	ErrInvalidJSON Kind = "InvalidJson"
	// ErrInvalidSnapshot: a snapshot without a field it must carry.
	ErrInvalidSnapshot Kind = "InvalidSnapshot"
	// ErrTableRequired: a table snapshot without its table; download
	// …/snapshots/{v}/table or apply the moves to version v − 1. Matching
	// it also matches ErrInvalidTable, as the server calls it.
	ErrTableRequired Kind = "TableRequired"
	// ErrFingerprintMismatch: the rebuilt placement does not hash to the
	// advertised fingerprint. Never route on such a placement.
	ErrFingerprintMismatch Kind = "FingerprintMismatch"
)

// Error is a refusal with its kind and a message for people. Match the
// kind with errors.Is(err, ErrX), or get the details with errors.As.
type Error struct {
	// Kind says why; errors.Is matches it.
	Kind Kind
	// Message says what, for people; it is not normative.
	Message string
}

// Error returns "Kind: message".
func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Unwrap returns the kind, so that errors.Is(err, ErrX) matches it; a
// TableRequired error also matches ErrInvalidTable.
func (e *Error) Unwrap() []error {
	if e.Kind == ErrTableRequired {
		return []error{e.Kind, ErrInvalidTable}
	}
	return []error{e.Kind}
}

// errorf makes an *Error of kind k.
func errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// FingerprintMismatchError is returned when a placement rebuilt from a
// snapshot or an encoding does not hash to the fingerprint it was sent
// with. It matches ErrFingerprintMismatch.
type FingerprintMismatchError struct {
	// Expected is the advertised fingerprint.
	Expected string
	// Actual is the fingerprint computed here.
	Actual string
}

// Error says which fingerprints differ.
func (e *FingerprintMismatchError) Error() string {
	return fmt.Sprintf("%s: expected fingerprint %s, computed %s", ErrFingerprintMismatch, e.Expected, e.Actual)
}

// Unwrap returns ErrFingerprintMismatch.
func (e *FingerprintMismatchError) Unwrap() error { return ErrFingerprintMismatch }
