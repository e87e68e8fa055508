package verdict

import (
	"fmt"
	"slices"
	"strings"
)

// Spoof flow names: the raw-frame flows of a spoof step.
const (
	SpoofOwn       = "spoofer-own"        // the spoofer's own IP and MAC
	SpoofForgedIP  = "spoofer-victim-ip"  // the other VM's IP, the spoofer's MAC
	SpoofForgedMAC = "spoofer-victim-mac" // the other VM's IP and MAC
	SpoofControl   = "victim-own"         // control: the other VM's own frames
)

// SpoofFlow is what the uplinks saw of one spoof flow.
type SpoofFlow struct {
	Name                       string
	Sent, Seen                 uint64
	DSCP                       map[int]uint64
	OfferedKbps, DeliveredKbps float64
}

// Spoofing is what a spoof step expects: the spoofer keeps its class
// (DSCP) whatever it forges, the VM it forges (As) keeps its own (AsDSCP).
type Spoofing struct {
	As           string
	DSCP, AsDSCP int
}

// ForeignMACFrames judges the frames the spoofer sent with the other VM's
// MAC: OVN may drop them (port security) or let them through, but none may
// leave with another DSCP than the spoofer's; at least one frame must have
// been sent.
func ForeignMACFrames(f SpoofFlow, s Spoofing) Verdict {
	if f.Sent == 0 {
		return Count(SpoofForgedMAC, ForeignMAC, 0, 1, 0, "no frame was sent")
	}
	other := f.Seen - f.DSCP[s.DSCP]
	detail := fmt.Sprintf("%d sent, %d seen (%d dropped by OVN), %d with another DSCP than %d (%d with the victim's %d)",
		f.Sent, f.Seen, f.Sent-min(f.Seen, f.Sent), other, s.DSCP, f.DSCP[s.AsDSCP], s.AsDSCP)
	return Count(SpoofForgedMAC, ForeignMAC, other, 0, 0, detail)
}

// SpoofMismatches judges a spoof step: the spoofer's frames, its own and
// with the forged IP, all seen with its DSCP; the forged VM's own frames
// all seen with its DSCP; frames with the forged MAC sent and none leaving
// the node (port security); every capture verdict passed, and one of them
// judged the spoofer's token-bucket bound. flow looks a flow up by name.
func SpoofMismatches(s Spoofing, flow func(name string) SpoofFlow, capture []Verdict) Mismatches {
	var mism Mismatches
	mism.Add(DSCP, classMismatches(flow(SpoofOwn), s.DSCP, "the spoofer's own frames")...)
	mism.Add(DSCP, classMismatches(flow(SpoofForgedIP), s.DSCP, "frames with VM "+s.As+"'s IP")...)
	mism.Add(DSCP, classMismatches(flow(SpoofControl), s.AsDSCP, "VM "+s.As+"'s own frames")...)
	if c := flow(SpoofControl); c.Seen != c.Sent {
		mism.Add(DSCP, fmt.Sprintf("VM %s's own frames: %d of %d seen", s.As, c.Seen, c.Sent))
	}
	if m := flow(SpoofForgedMAC); m.Sent == 0 || m.Seen != 0 {
		mism.Add(PortSecurity, fmt.Sprintf("frames with VM %s's MAC: %d sent, %d left the node, want all dropped by port security", s.As, m.Sent, m.Seen))
	}
	mism.Judge(capture...)
	if !slices.ContainsFunc(capture, func(v Verdict) bool { return v.Property == PolicingBound }) {
		mism.Add(PolicingBound, "the capture judged no token-bucket bound for the spoofer's meter")
	}
	return mism
}

// classMismatches: some frames seen, every one with DSCP dscp.
func classMismatches(f SpoofFlow, dscp int, what string) []string {
	if f.Seen == 0 || f.DSCP[dscp] != f.Seen {
		return []string{fmt.Sprintf("%s: %d of %d sent seen, DSCP %v, want all with DSCP %d", what, f.Seen, f.Sent, DSCPList(f.DSCP), dscp)}
	}
	return nil
}

// DSCPList writes a DSCP histogram as [packets×value ...] in value order.
func DSCPList(h map[int]uint64) string {
	var parts []string
	for d := range 64 {
		if n := h[d]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d×%d", n, d))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
