package traffic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/capture/live"
)

// InjectReport says what the injector put on the wire.
type InjectReport struct {
	Flow       string
	Sent       uint64 // frames accepted by the kernel
	Bytes      uint64 // frame bytes of those frames
	FrameLen   int
	FirstSeq   uint64
	LastSeq    uint64 // sequence number of the last frame sent
	SendErrors uint64 // frames the kernel refused (ENOBUFS); they have no sequence gap-free guarantee
	Start, End time.Time
	PPS        float64 // achieved frames per second (below the asked rate when the schedule slipped)
}

// Inject sends raw.Count crafted frames out of ifname inside the namespace
// through an AF_PACKET socket, paced at raw.PPS, each carrying the flow's
// tag and a sequence number in its payload.
func Inject(ctx context.Context, netns, ifname string, raw RawSpec) (InjectReport, error) {
	b, err := NewFrameBuilder(raw)
	if err != nil {
		return InjectReport{}, err
	}
	raw = b.spec // with its defaults filled
	name := fmt.Sprintf("inject flow %q on %s/%s", raw.Flow.Name, netns, ifname)
	sock, err := live.OpenPacketSocket(netns, ifname, live.SocketOptions{})
	if err != nil {
		return InjectReport{}, fmt.Errorf("%s: %w", name, err)
	}
	defer sock.Close()
	rep := InjectReport{Flow: raw.Flow.Name, FirstSeq: raw.Start, Start: time.Now()}
	var interval time.Duration
	if raw.PPS > 0 {
		interval = time.Duration(float64(time.Second) / raw.PPS)
	}
	next := rep.Start
	for i := uint64(0); i < raw.Count; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return rep, fmt.Errorf("%s: after %d frames: %w", name, rep.Sent, ctx.Err())
		}
		next = pace(next, interval)
		seq := raw.Start + i
		frame, err := b.Build(seq)
		if err != nil {
			return rep, err
		}
		if err := sock.Write(frame); err != nil {
			if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
				rep.SendErrors++
				continue
			}
			return rep, fmt.Errorf("%s: frame %d: %w", name, seq, err)
		}
		rep.Sent++
		rep.Bytes += uint64(len(frame))
		rep.FrameLen = len(frame)
		rep.LastSeq = seq
	}
	rep.End = time.Now()
	if d := rep.End.Sub(rep.Start).Seconds(); d > 0 {
		rep.PPS = float64(rep.Sent) / d
	}
	return rep, nil
}

// maxLag is how far the injector may fall behind its schedule and catch
// up with back-to-back frames; beyond it the schedule slips instead, so a
// descheduled injector never bursts more than maxLag worth of frames into
// a datapath whose input buffer (an AF_PACKET ring) cannot grow.
const maxLag = 2 * time.Millisecond

// pace waits until the frame's scheduled send time at and returns the next
// one. It is rate control, not synchronisation.
func pace(at time.Time, interval time.Duration) time.Time {
	now := time.Now()
	switch d := at.Sub(now); {
	case d > 100*time.Microsecond:
		time.Sleep(d)
	case d < -maxLag:
		at = now // slip: do not burst to catch up
	}
	return at.Add(interval)
}
