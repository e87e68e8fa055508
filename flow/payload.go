package flow

import "encoding/binary"

// Raw packet payload layout (big endian), at the start of the L4 payload:
//
//	0  4  magic "NQoS"
//	4  4  flow tag (Spec.Tag)
//	8  8  sequence number, 0-based
//	16 .. padding (zeros) up to the requested size
const (
	PayloadMagic   = "NQoS"
	PayloadMinSize = 16
)

// PutSeqPayload writes the tagged sequence header into b, which must be at
// least PayloadMinSize long; the rest of b is left untouched.
func PutSeqPayload(b []byte, tag uint32, seq uint64) {
	copy(b[0:4], PayloadMagic)
	binary.BigEndian.PutUint32(b[4:8], tag)
	binary.BigEndian.PutUint64(b[8:16], seq)
}

// ParseSeqPayload reads the tagged sequence header at the start of b.
func ParseSeqPayload(b []byte) (tag uint32, seq uint64, ok bool) {
	if len(b) < PayloadMinSize || b[0] != 'N' || b[1] != 'Q' || b[2] != 'o' || b[3] != 'S' {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(b[4:8]), binary.BigEndian.Uint64(b[8:16]), true
}
