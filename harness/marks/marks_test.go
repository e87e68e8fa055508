package marks

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
)

var (
	t0    = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dst   = netip.MustParseAddr("10.20.0.10")
	other = netip.MustParseAddr("10.20.0.20")
)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

func pkt(at, dscp int, d netip.Addr) capture.Packet {
	return capture.Packet{At: ms(at), Dst: d, DSCP: dscp}
}

func TestTallyClosedWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		seen []capture.Packet
		want Count
	}{
		{"all marked", []capture.Packet{pkt(0, 46, dst), pkt(10, 46, dst), pkt(20, 46, dst)},
			Count{Packets: 3, Marked: 3, DSCP: map[int]int{46: 3}, FirstMarked: ms(0), Gap: 80 * time.Millisecond, GapStart: ms(20), GapEnd: ms(100)}},
		{"unmarked run is a gap", []capture.Packet{pkt(0, 46, dst), pkt(10, 0, dst), pkt(20, 0, dst), pkt(90, 46, dst), pkt(95, 46, dst)},
			Count{Packets: 5, Marked: 3, Unmarked: 2, DSCP: map[int]int{0: 2, 46: 3}, FirstMarked: ms(0), FirstUnmarked: ms(10), LastUnmarked: ms(20),
				Gap: 90 * time.Millisecond, GapStart: ms(0), GapEnd: ms(90)}},
		{"loss is a gap, other flows and the window ignored", []capture.Packet{pkt(-5, 0, dst), pkt(5, 46, dst), pkt(6, 0, other), pkt(70, 46, dst), pkt(99, 46, dst), pkt(100, 0, dst)},
			Count{Packets: 3, Marked: 3, DSCP: map[int]int{46: 3}, FirstMarked: ms(5), Gap: 65 * time.Millisecond, GapStart: ms(5), GapEnd: ms(70)}},
		{"nothing marked", []capture.Packet{pkt(50, 10, dst)},
			Count{Packets: 1, Unmarked: 1, DSCP: map[int]int{10: 1}, FirstUnmarked: ms(50), LastUnmarked: ms(50), Gap: 100 * time.Millisecond, GapStart: ms(0), GapEnd: ms(100)}},
		{"merged uplinks out of order", []capture.Packet{pkt(20, 46, dst), pkt(0, 46, dst), pkt(10, 46, dst)},
			Count{Packets: 3, Marked: 3, DSCP: map[int]int{46: 3}, FirstMarked: ms(0), Gap: 80 * time.Millisecond, GapStart: ms(20), GapEnd: ms(100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.From, tc.want.To = ms(0), ms(100)
			if got := Tally(tc.seen, dst, 46, ms(0), ms(100)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTallyOpenBounds(t *testing.T) {
	seen := []capture.Packet{pkt(0, 0, dst), pkt(10, 46, dst), pkt(20, 0, dst), pkt(30, 46, dst), pkt(40, 46, other), pkt(50, 18, dst)}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		packets  int
		marked   int
		first    time.Time
		last     time.Time
	}{
		{"open window", time.Time{}, time.Time{}, 5, 2, ms(10), ms(50)},
		{"from 15ms", ms(15), time.Time{}, 3, 1, ms(30), ms(50)},
		{"bounded, end excluded", ms(10), ms(30), 2, 1, ms(10), ms(20)},
		{"empty", ms(100), time.Time{}, 0, 0, time.Time{}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Tally(seen, dst, 46, tc.from, tc.to)
			if c.Packets != tc.packets || c.Marked != tc.marked || c.Unmarked != tc.packets-tc.marked ||
				!c.FirstMarked.Equal(tc.first) || !c.LastUnmarked.Equal(tc.last) {
				t.Errorf("Tally = %+v, want %d packets, %d marked, first marked %v, last unmarked %v", c, tc.packets, tc.marked, tc.first, tc.last)
			}
		})
	}
}

func TestFirst(t *testing.T) {
	// out of time order on purpose: several uplinks are merged
	seen := []capture.Packet{pkt(30, 46, dst), pkt(5, 46, dst), pkt(20, 0, dst), pkt(25, 46, other)}
	for _, tc := range []struct {
		name   string
		dscp   int
		after  time.Time
		wantAt time.Time
		found  bool
	}{
		{"marked", 46, ms(0), ms(5), true},
		{"marked after 6ms", 46, ms(6), ms(30), true},
		{"any DSCP after 6ms", -1, ms(6), ms(20), true},
		{"at the bound", 46, ms(30), ms(30), true},
		{"none", 46, ms(31), time.Time{}, false},
		{"other dst ignored", 18, ms(0), time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := First(seen, dst, tc.dscp, tc.after)
			if ok != tc.found || (ok && !got.At.Equal(tc.wantAt)) {
				t.Errorf("First = %v, %v; want %v, %v", got.At, ok, tc.wantAt, tc.found)
			}
		})
	}
}

// BenchmarkTally: one minute of a 500/s stream plus a 1500/s policed
// flow, the log size a daemon restart step analyses per window.
func BenchmarkTally(b *testing.B) {
	var seen []capture.Packet
	for i := range 120000 {
		d, dscp := dst, 46
		if i%4 != 0 {
			d, dscp = other, 10
		}
		seen = append(seen, capture.Packet{At: t0.Add(time.Duration(i) * 500 * time.Microsecond), Dst: d, DSCP: dscp})
	}
	b.ReportAllocs()
	for b.Loop() {
		Tally(seen, dst, 46, t0, t0.Add(time.Minute))
	}
}
