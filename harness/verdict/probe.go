package verdict

import (
	"fmt"
	"time"
)

// ProbeMarks checks a lifecycle probe's packets to peer on the uplinks:
// some were seen, and at most maxUnmarked lack the object's DSCP.
func ProbeMarks(vm, peer string, packets, unmarked, maxUnmarked, dscp int) Verdict {
	subject := "VM " + vm
	if packets == 0 {
		return Unmeasured(subject, Unmarked, 0, "packets", fmt.Sprintf("the probe saw no packet to %s on the uplinks", peer))
	}
	return Within(subject, Unmarked, float64(unmarked), 0, upTo(float64(maxUnmarked)), "packets", packets,
		fmt.Sprintf("%d of %d probe packets to %s without DSCP %d, at most %d allowed", unmarked, packets, peer, dscp, maxUnmarked))
}

// ProbeLoss checks the datagrams a probe lost in one direction ("out":
// guest to peer, "in": peer to guest) against maxLost; sent is how many
// datagrams the direction sent (0 when unknown: the loss is the sample).
func ProbeLoss(vm, dir string, lost, sent, maxLost int) Verdict {
	return Within("VM "+vm, Loss, float64(lost), 0, upTo(float64(maxLost)), "datagrams", max(sent, 1),
		fmt.Sprintf("%d probe datagrams lost %s, at most %d allowed", lost, dir, maxLost))
}

// MarkingGap checks the longest time without a marked probe packet
// around a daemon restart against maxGap; packets are the probe packets
// the gap is measured over.
func MarkingGap(vm string, gap, maxGap time.Duration, packets int) Verdict {
	return Within("VM "+vm, Gap, gap.Seconds(), 0, upTo(maxGap.Seconds()), "s", max(packets, 1),
		fmt.Sprintf("%v without a marked probe packet, at most %v allowed", gap, maxGap))
}

// FirstMarked checks when a new VM's first marked packet appeared after
// its port's creation against the window [lo, hi]; packets are the probe
// packets seen. context completes the message.
func FirstMarked(vm string, at, lo, hi time.Duration, packets int, context string) Verdict {
	detail := fmt.Sprintf("first marked packet %v after the LSP's creation, want within [%v, %v] (%s)", at, lo, hi, context)
	if at <= 0 {
		return Unmeasured("VM "+vm, Delay, lo.Seconds(), "s", detail)
	}
	return Within("VM "+vm, Delay, at.Seconds(), lo.Seconds(), upTo((hi - lo).Seconds()), "s", max(packets, 1), detail)
}
