package capture

// SeqStats tracks the sequence numbers of a raw flow's tagged payloads.
type SeqStats struct {
	Distinct   uint64 // distinct sequence numbers seen
	Duplicates uint64 // frames whose sequence number was already seen
	Reordered  uint64 // frames with a lower sequence number than their predecessor
	Max        uint64
	seen       []uint64 // bitset
	last       uint64
	any        bool
}

// maxTrackedSeq bounds the bitset (16 MiB) against garbage sequence numbers.
const maxTrackedSeq = 1 << 27

func (s *SeqStats) add(seq uint64) {
	if s.any && seq < s.last {
		s.Reordered++
	}
	s.last, s.any = seq, true
	s.Max = max(s.Max, seq)
	if seq >= maxTrackedSeq {
		s.Distinct++ // cannot dedupe; count it
		return
	}
	w := int(seq / 64)
	if w >= len(s.seen) {
		s.seen = append(s.seen, make([]uint64, w+1-len(s.seen))...)
	}
	bit := uint64(1) << (seq % 64)
	if s.seen[w]&bit != 0 {
		s.Duplicates++
		return
	}
	s.seen[w] |= bit
	s.Distinct++
}

// Missing returns how many of the sequence numbers 0..sent-1 were not seen.
func (s *SeqStats) Missing(sent uint64) uint64 {
	var seen uint64
	for seq := uint64(0); seq < sent && seq < maxTrackedSeq; seq++ {
		if w := int(seq / 64); w < len(s.seen) && s.seen[w]&(1<<(seq%64)) != 0 {
			seen++
		}
	}
	return sent - seen
}
