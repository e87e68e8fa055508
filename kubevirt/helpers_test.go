package kubevirt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/topo/localnet"
)

// bootTestbed boots a 2-node testbed (with the Kubernetes API when its
// binaries are built) and registers a teardown that fails the test if
// anything of the run is left behind.
func bootTestbed(t testing.TB, spec localnet.Spec) (*localnet.Testbed, kubernetes.Interface) {
	t.Helper()
	_, kerr := kubeapi.BinDir()
	if kerr != nil {
		t.Logf("without Kubernetes API (no launcher pods): %v", kerr)
	}
	spec.WithKube = kerr == nil
	tb := localnet.StartTB(t, spec)
	if tb.RESTConfig() == nil {
		return tb, nil
	}
	cs, err := kubernetes.NewForConfig(tb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return tb, cs
}

// watchUplink records DSCPs on the fabric side of node's uplink until
// the test ends.
func watchUplink(t *testing.T, tb *localnet.Testbed, node string) *live.Watch {
	t.Helper()
	ns, ifname, err := tb.UplinkCapturePoint(node)
	if err != nil {
		t.Fatal(err)
	}
	w, err := live.StartWatch(ns, ifname)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

// iperfResult is the part of `iperf3 -J` output the tests read.
type iperfResult struct {
	End struct {
		SumSent     iperfSum `json:"sum_sent"`
		SumReceived iperfSum `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

type iperfSum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	LostPackets   int     `json:"lost_packets"`
	Packets       int     `json:"packets"`
}

// iperf runs an iperf3 client in netns and decodes its JSON report.
func iperf(ctx context.Context, tb *localnet.Testbed, netns string, args ...string) (iperfResult, error) {
	out, err := tb.Exec(ctx, netns, append([]string{"iperf3", "-J"}, args...)...)
	var r iperfResult
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
		return r, fmt.Errorf("iperf3 %s: %v (decode: %v)", strings.Join(args, " "), err, jerr)
	}
	if r.Error != "" {
		return r, fmt.Errorf("iperf3 %s: %s", strings.Join(args, " "), r.Error)
	}
	return r, err
}

// endpoint is an address inside a namespace.
type endpoint struct {
	netns string
	ip    string
}

// reach sends count UDP datagrams from a to b (100/s) and fails the test
// unless every one arrives; the machine has no ping.
func reach(t *testing.T, a, b endpoint, count int) {
	t.Helper()
	p := startProbe(t, a, b, 10*time.Millisecond)
	waitReceived(t, p, count)
	if r := p.Stop(); r.Lost != 0 {
		t.Fatalf("%s -> %s: %d of %d datagrams lost", a.ip, b.ip, r.Lost, r.Sent)
	}
}

// reachEventually polls until a datagram from a reaches b and returns
// how long that took.
func reachEventually(t *testing.T, a, b endpoint) time.Duration {
	t.Helper()
	start := time.Now()
	p := startProbe(t, a, b, 5*time.Millisecond)
	waitReceived(t, p, 1)
	took := time.Since(start)
	p.Stop()
	return took
}

func startProbe(t *testing.T, a, b endpoint, every time.Duration) *localnet.Probe {
	t.Helper()
	p, err := localnet.StartProbe(context.Background(), a.netns, netip.AddrPortFrom(netip.MustParseAddr(a.ip), 7100),
		b.netns, netip.AddrPortFrom(netip.MustParseAddr(b.ip), 7100), every)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}

// waitReceived polls until the probe has received n datagrams.
func waitReceived(t *testing.T, p *localnet.Probe, n int) {
	t.Helper()
	err := poll.Until(context.Background(), 30*time.Second, 10*time.Millisecond, "probe datagrams", func(context.Context) (bool, error) {
		return p.Received() >= n, nil
	})
	if err != nil {
		p.Stop()
		t.Fatalf("%v: received %d, want %d", err, p.Received(), n)
	}
}

// firstMarked returns the first packet from src with dscp the watch saw
// at or after t.
func firstMarked(w *live.Watch, src netip.Addr, dscp int, t time.Time) (capture.Packet, bool) {
	for _, p := range w.Packets(src) {
		if p.DSCP == dscp && !p.At.Before(t) {
			return p, true
		}
	}
	return capture.Packet{}, false
}
