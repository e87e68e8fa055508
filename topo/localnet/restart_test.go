package localnet

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// checkRestartAll restarts every daemon of the run twice back to back,
// killed then terminated: each restart must start a new instance at once
// (no "already running" from a pidfile the old instance still locks),
// and afterwards the testbed is healthy, every chassis is in sync and the
// iperf3 servers listen again.
func checkRestartAll(t *testing.T, tb *Testbed) {
	ctx := context.Background()
	st, err := RunStatus(ctx, tb.RunID())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range st.Daemons {
		for _, mode := range []RestartMode{RestartKill, RestartGraceful} {
			before, _ := tb.DaemonPid(d.Node, d.Name)
			if err := tb.RestartDaemon(ctx, d.Node, d.Name, mode); err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			after, err := tb.DaemonPid(d.Node, d.Name)
			if err != nil || after == before || !alive(after) {
				t.Fatalf("%s %s (%s): pid %d -> %d, alive %v (%v)", d.Node, d.Name, mode, before, after, alive(after), err)
			}
		}
	}
	if st, err := RunStatus(ctx, tb.RunID()); err != nil || !st.Healthy() {
		t.Fatalf("after restarts: healthy %v (%v): %+v", st.Healthy(), err, st.Daemons)
	}
	if err := tb.WaitChassis(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitHVSync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range tb.Hosts() {
		for _, d := range st.Daemons {
			if d.Node != "host-"+h.Name || !strings.HasPrefix(d.Name, "iperf3-") {
				continue
			}
			// iperf3-<host>-<port>-<family>
			f := strings.Split(d.Name, "-")
			port, _ := strconv.Atoi(f[len(f)-2])
			ip := map[string]string{"v4": h.IPv4, "v6": h.IPv6}[f[len(f)-1]]
			if err := tb.waitListening(ctx, h.Netns, ip, port); err != nil {
				t.Errorf("%s: %v", d.Name, err)
			}
		}
	}
}
