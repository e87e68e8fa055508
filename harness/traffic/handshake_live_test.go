package traffic_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/traffic"
)

// TestIperfClientErrorBeforeHandshake: a UDP client that fails before it
// sends its handshake (no route to an address outside the sender's
// prefix) reports iperf3's own error, not a handshake that timed out.
func TestIperfClientErrorBeforeHandshake(t *testing.T) {
	p := newPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := flow.Spec{Name: "offlink6", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("fd98::1"),
		DstIP: netip.MustParseAddr("fd98:0:0:1::2"), DstPort: 5303, Rate: 1e6, Duration: time.Second}
	_, err := traffic.IperfClient(ctx, p.a, spec, traffic.IperfOptions{Handshake: 3 * time.Second})
	if err == nil || errors.Is(err, traffic.ErrHandshake) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v, want iperf3's own error (network unreachable)", err)
	}
}
