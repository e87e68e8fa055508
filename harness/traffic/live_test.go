package traffic_test

import (
	"context"
	"errors"
	"math"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/traffic"
	"github.com/nqos/nqos/internal/nettest"
)

// pair is two namespaces joined by one veth: a (sender) and b (receiver).
type pair struct {
	a, b       string
	macA, macB net.HardwareAddr
}

func newPair(t *testing.T) pair {
	bed := nettest.New(t, "c1-tr", "iperf3")
	p := pair{a: bed.Netns("a"), b: bed.Netns("b"),
		macA: net.HardwareAddr{2, 0, 0, 0, 0xc1, 0xa}, macB: net.HardwareAddr{2, 0, 0, 0, 0xc1, 0xb}}
	bed.Veth(nettest.End{Netns: p.a, Name: "eth0", MAC: p.macA.String(), Index: 201},
		nettest.End{Netns: p.b, Name: "eth0", MAC: p.macB.String(), Index: 202})
	bed.Addr(p.a, "eth0", "10.98.0.1/24")
	bed.Addr(p.a, "eth0", "fd98::1/64")
	bed.Addr(p.b, "eth0", "10.98.0.2/24")
	bed.Addr(p.b, "eth0", "fd98::2/64")
	for _, n := range []struct{ ns, ip, mac string }{
		{p.a, "10.98.0.2", p.macB.String()}, {p.a, "fd98::2", p.macB.String()},
		{p.b, "10.98.0.1", p.macA.String()}, {p.b, "fd98::1", p.macA.String()},
	} {
		bed.Neigh(n.ns, "eth0", n.ip, n.mac)
	}
	return p
}

func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }

func TestIperfLive(t *testing.T) {
	p := newPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cases := []flow.Spec{
		{Name: "udp4", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("10.98.0.1"), DstIP: netip.MustParseAddr("10.98.0.2"), DstPort: 5301, Rate: 20e6, Duration: time.Second},
		{Name: "tcp6", Protocol: flow.TCP, SrcIP: netip.MustParseAddr("fd98::1"), DstIP: netip.MustParseAddr("fd98::2"), DstPort: 5302, Rate: 30e6, Duration: time.Second, Parallel: 2},
	}
	for _, spec := range cases {
		t.Run(spec.Name, func(t *testing.T) {
			srv, err := traffic.IperfServer(ctx, p.b, spec.DstIP, spec.DstPort)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			res, err := traffic.IperfClient(ctx, p.a, spec, traffic.IperfOptions{Length: 1200})
			if err != nil {
				t.Fatal(err)
			}
			srvRep, err := srv.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: sender %.2f Mbit/s %d bytes, receiver %.2f Mbit/s %d bytes, lost %d; server saw %d bytes",
				spec.Name, res.Sender.BitsPerSecond/1e6, res.Sender.Bytes, res.Receiver.BitsPerSecond/1e6, res.Receiver.Bytes,
				res.Receiver.LostPackets, srvRep.End.SumReceived.Bytes)
			if !within(res.Sender.BitsPerSecond, float64(spec.Rate), 0.1) {
				t.Errorf("sender rate %.0f bit/s, offered %d (tolerance 10%%)", res.Sender.BitsPerSecond, spec.Rate)
			}
			if !within(float64(res.Receiver.Bytes), float64(res.Sender.Bytes), 0.01) {
				t.Errorf("receiver %d bytes vs sender %d (tolerance 1%%)", res.Receiver.Bytes, res.Sender.Bytes)
			}
			if srvRep.End.SumReceived.Bytes != res.Receiver.Bytes {
				t.Errorf("server report %d bytes, client's copy of it %d", srvRep.End.SumReceived.Bytes, res.Receiver.Bytes)
			}
			if got := len(res.Report.Start.Connected); got != max(1, spec.Parallel) {
				t.Errorf("%d data connections, want %d", got, max(1, spec.Parallel))
			}
		})
	}
}

// TestIperfHandshakeLost: the receiver blackholes its UDP replies (an ip
// rule), so the client's UDP handshake is never answered while the TCP
// control connection works. With Handshake set the client is killed
// within it and the error wraps ErrHandshake; the same flow after the
// rule goes completes.
func TestIperfHandshakeLost(t *testing.T) {
	p := newPair(t)
	bed := nettest.New(t, "c1-hs", "ip")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := flow.Spec{Name: "udp4-hs", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("10.98.0.1"), DstIP: netip.MustParseAddr("10.98.0.2"),
		DstPort: 5303, Rate: 10e6, Duration: time.Second}
	bed.RunIn(p.b, "ip", "rule", "add", "ipproto", "udp", "blackhole")
	srv, err := traffic.IperfServer(ctx, p.b, spec.DstIP, spec.DstPort)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	_, err = traffic.IperfClient(ctx, p.a, spec, traffic.IperfOptions{Handshake: time.Second})
	if !errors.Is(err, traffic.ErrHandshake) {
		t.Fatalf("handshake answered nowhere: error %v, want ErrHandshake", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("client killed after %s, want within about the 1s handshake bound", d)
	}
	srv.Close()
	bed.RunIn(p.b, "ip", "rule", "del", "ipproto", "udp", "blackhole")
	srv, err = traffic.IperfServer(ctx, p.b, spec.DstIP, spec.DstPort)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := traffic.IperfClient(ctx, p.a, spec, traffic.IperfOptions{Handshake: time.Second}); err != nil {
		t.Errorf("after the rule is gone: %v", err)
	}
}

func TestInjectLive(t *testing.T) {
	p := newPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pcap := filepath.Join(t.TempDir(), "b.pcap")
	c, err := live.Start(ctx, live.Options{Netns: p.b, Interface: "eth0", PcapPath: pcap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	spec := flow.Spec{Name: "inj-udp6", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("fd98::1"), DstIP: netip.MustParseAddr("fd98::2"),
		SrcPort: 4000, DstPort: 4001, VLAN: 0}
	rep, err := traffic.Inject(ctx, p.a, "eth0", traffic.RawSpec{Flow: spec, SrcMAC: p.macA, DstMAC: p.macB, DSCP: 18, Count: 1000, PPS: 5000, PayloadSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	a, err := capture.AnalyzeFile(pcap, []flow.Spec{spec}, capture.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fr := a.Flow("inj-udp6")
	if rep.Sent != 1000 || fr.Packets != 1000 || fr.DSCP[18] != 1000 || fr.Seq.Missing(1000) != 0 || fr.Bytes != rep.Bytes {
		t.Errorf("sent %d (%d bytes), captured %d (%d bytes), dscp18 %d, missing %d", rep.Sent, rep.Bytes, fr.Packets, fr.Bytes, fr.DSCP[18], fr.Seq.Missing(1000))
	}
	// Pacing: 1000 frames at 5000/s span 199.8 ms; allow 190..400 ms.
	if span := fr.Last.Sub(fr.First); span < 190*time.Millisecond || span > 400*time.Millisecond {
		t.Errorf("1000 frames at 5000 pps spanned %s on the wire, want 190..400 ms", span)
	}
}
