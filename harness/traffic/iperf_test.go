package traffic

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/flow"
)

func TestIperfArgs(t *testing.T) {
	base := flow.Spec{Name: "f", Protocol: flow.UDP, SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2"),
		DstPort: 5201, Duration: 1500 * time.Millisecond}
	tcp6 := base
	tcp6.Protocol, tcp6.SrcIP, tcp6.DstIP, tcp6.Parallel, tcp6.SrcPort, tcp6.Rate = flow.TCP,
		netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2"), 4, 40000, 50e6
	sctp := base
	sctp.Protocol = flow.SCTP
	udp := base
	udp.Rate = 200e6
	cases := []struct {
		name string
		spec flow.Spec
		opts IperfOptions
		want string
		err  string
	}{
		{"udp", udp, IperfOptions{Length: 1400}, "-c 10.0.0.2 -p 5201 -B 10.0.0.1 -t 2 -J -u -b 200000000 -l 1400", ""},
		{"tcp6", tcp6, IperfOptions{}, "-c fd00::2 -p 5201 -B fd00::1 -t 2 -J -b 12500000 -P 4 --cport 40000", ""},
		{"sctp", sctp, IperfOptions{}, "-c 10.0.0.2 -p 5201 -B 10.0.0.1 -t 2 -J --sctp", ""},
		{"no port", flow.Spec{Name: "n", Protocol: flow.UDP, SrcIP: base.SrcIP, DstIP: base.DstIP, Duration: time.Second}, IperfOptions{}, "", `flow "n": iperf3 needs`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, err := IperfArgs(c.spec, c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(args, " "); got != c.want {
				t.Errorf("args\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestDecodeIperfJSON decodes real iperf 3.12 output (testdata) into the typed structs.
func TestDecodeIperfJSON(t *testing.T) {
	cases := []struct {
		file              string
		proto             string
		sentBytes, rcvd   uint64
		sentPkts, rcvPkts uint64
	}{
		{"iperf3-udp-client.json", "UDP", 1277952, 1277952, 39, 39},
		{"iperf3-udp-server.json", "UDP", 0, 1277952, 0, 39},
		{"iperf3-tcp-client.json", "TCP", 6291456, 6291456, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := decodeReport(c.file, data, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			e := rep.End
			if rep.Start.TestStart.Protocol != c.proto || e.SumSent.Bytes != c.sentBytes || e.SumReceived.Bytes != c.rcvd ||
				e.SumSent.Packets != c.sentPkts || e.SumReceived.Packets != c.rcvPkts || len(rep.Intervals) == 0 || len(rep.Start.Connected) == 0 {
				t.Errorf("decoded %+v", rep)
			}
		})
	}
	var rep IperfReport
	if err := json.Unmarshal([]byte(`{"error":"unable to connect"}`), &rep); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeReport("x", []byte(`{"error":"unable to connect"}`), "", nil); err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("iperf3 error not surfaced: %v", err)
	}
}
