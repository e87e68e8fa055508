package live_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/capture/live"
)

// Output of ovs-ofctl 3.1 captured from the integration bed.
const meterStatsOut = `OFPST_METER reply (OF1.3) (xid=0x2):
meter:1 flow_count:2 packet_in_count:23920 byte_in_count:24924640 duration:1.091s bands:
0: packet_count:11330 byte_count:11805860

meter:2 flow_count:0 packet_in_count:0 byte_in_count:0 duration:0.5s bands:
0: packet_count:0 byte_count:0
`

func TestParseMeterStats(t *testing.T) {
	ms, err := live.ParseMeterStats(meterStatsOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("meters = %d, want 2", len(ms))
	}
	m, ok := live.Meter(ms, 1)
	if !ok {
		t.Fatal("meter 1 missing")
	}
	if m.FlowCount != 2 || m.PacketInCount != 23920 || m.ByteInCount != 24924640 || m.Duration != 1091*time.Millisecond {
		t.Errorf("meter 1 = %+v", m)
	}
	if p, b := m.Dropped(); p != 11330 || b != 11805860 {
		t.Errorf("dropped = %d packets %d bytes", p, b)
	}
	earlier := live.MeterStats{PacketInCount: 920, ByteInCount: 640, Bands: []live.BandStats{{PacketCount: 330, ByteCount: 860}}}
	d := m.Sub(earlier)
	if p, _ := d.Dropped(); d.PacketInCount != 23000 || p != 11000 {
		t.Errorf("delta = %+v", d)
	}
	if m.Bands[0].PacketCount != 11330 {
		t.Error("Sub modified its receiver's bands")
	}
}

func TestParseMeterStatsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0: packet_count:1 byte_count:2\n", "band before any meter"},
		{"meter:1 flow_count:x packet_in_count:1 byte_in_count:1\n", "field flow_count"},
		{"meter:1 flow_count:1 byte_in_count:1\n", "field packet_in_count missing"},
		{"meter:1 flow_count:1 packet_in_count:1 byte_in_count:1\nzz: packet_count:1\n", "band index"},
	} {
		_, err := live.ParseMeterStats(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseMeterStats(%q) error = %v, want %q", c.in, err, c.want)
		}
	}
}
