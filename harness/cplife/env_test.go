package cplife

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/seeded"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/topo/localnet"
)

// The nqos-sim binary is built once per test binary.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func controllerBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "cplife-bin-")
		if binErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			// A mutation run (go test -tags=nqos_bug_<id>) must reach
			// the controller subprocess too.
			var tags []string
			if tag := seeded.Active.Tag(); tag != "" {
				tags = append(tags, tag)
			}
			binPath, binErr = BuildController(ctx, binDir, tags...)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Names of the default testbed network and its external hosts.
const (
	vmNamespace = "vms"
	defaultNAD  = "vms/tenant-blue"
)

var blueLabels = map[string]string{"nqos-network": "tenant-blue"}

// env is one real testbed with the Kubernetes API, a test-side NB client
// and the controller as a subprocess.
type env struct {
	t    *testing.T
	ctx  context.Context
	tb   *localnet.Testbed
	cl   *Cluster
	vms  *kubevirt.Manager
	nb   *ovnnb.Client
	cfg  ControllerConfig
	ctrl *Controller
}

// newEnv boots testbed runID (networks nil = the default ipamless one).
func newEnv(t *testing.T, runID string, nets []localnet.Network) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("real OVN testbed with kube-apiserver: not in -short")
	}
	if _, err := kubeapi.BinDir(); err != nil {
		t.Skipf("kube-apiserver/etcd not built (hack/kube-bins.sh): %v", err)
	}
	bin := controllerBinary(t)
	tb := localnet.StartTB(t, localnet.Spec{RunID: runID, Nodes: 2, WithKube: true, Networks: nets})
	e := &env{t: t, ctx: context.Background(), tb: tb}
	var err error
	if e.cl, err = NewCluster(tb.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if e.nb, err = ovnnb.Dial(e.ctx, tb.NBAddress(), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.nb.Close)
	e.vms = kubevirt.NewManager(tb, e.cl.Kube)
	e.cfg = ControllerConfig{Bin: bin, Kubeconfig: tb.Kubeconfig(), NB: tb.NBAddress(),
		LogPath: filepath.Join(t.TempDir(), "controller.log")}
	t.Cleanup(e.dumpLogOnFailure)
	return e
}

func (e *env) dumpLogOnFailure() {
	if !e.t.Failed() {
		return
	}
	b, _ := os.ReadFile(e.cfg.LogPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	e.t.Logf("controller log (last %d lines):\n%s", min(len(lines), 40), strings.Join(lines[max(0, len(lines)-40):], "\n"))
}

// startController starts the subprocess and waits until it is synced.
func (e *env) startController() {
	e.t.Helper()
	c, err := StartController(e.ctx, e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.setController(c)
	if err := c.WaitSynced(e.ctx, 60*time.Second); err != nil {
		e.t.Fatal(err)
	}
}

// setController replaces the current process (closed at cleanup).
func (e *env) setController(c *Controller) {
	if e.ctrl == nil {
		e.t.Cleanup(func() { _ = e.ctrl.Close() })
	}
	e.ctrl = c
}

func (e *env) node(i int) string { return e.tb.Nodes()[i].Name }

// vm creates a VM with one NIC on nad.
func (e *env) vm(name string, node int, tier, nad, ipv4, mac string) {
	e.t.Helper()
	vm := kubevirt.VM{Name: name, Namespace: vmNamespace, Labels: map[string]string{"tier": tier}, Node: e.node(node),
		Interfaces: []kubevirt.Interface{{NAD: nad, MAC: mac, IPv4: ipv4}}}
	if err := e.vms.Create(e.ctx, vm, kubevirt.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) apply(s NetworkQoSSpec) {
	e.t.Helper()
	if _, err := e.cl.ApplyNetworkQoS(e.ctx, s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) host(name string) localnet.Host {
	e.t.Helper()
	h, ok := e.tb.Host(name)
	if !ok {
		e.t.Fatalf("no host %s", name)
	}
	return h
}

// converge waits until the NB equals the compiler's view and logs it.
func (e *env) converge(what string) ConvergeResult {
	e.t.Helper()
	res, err := WaitConverged(e.ctx, e.cl, e.nb, 60*time.Second)
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	e.t.Logf("%s: converged in %v (%d QoS rows, %d port groups, %d address sets)", what, res.Took, res.QoSRows, res.PortGroups, res.AddressSets)
	return res
}

// stream starts a marked stream from a VM to a host on port, watched at
// the VM's node uplink, stopped at cleanup.
func (e *env) stream(vmName string, node int, vmIP string, host localnet.Host, port uint16, dscp int) *Stream {
	e.t.Helper()
	wns, wif, err := e.tb.UplinkCapturePoint(e.node(node))
	if err != nil {
		e.t.Fatal(err)
	}
	src := netip.MustParsePrefix(vmIP).Addr()
	s, err := StartStream(e.ctx, StreamSpec{Name: vmName + "->" + host.Name,
		SrcNetns: e.tb.GuestNetns(kubevirt.GuestName(vmNamespace, vmName)), Src: netip.AddrPortFrom(src, port),
		DstNetns: host.Netns, Dst: netip.AddrPortFrom(netip.MustParseAddr(host.IPv4), port),
		DSCP: dscp, WatchNetns: wns, WatchIf: wif})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Stop() })
	return s
}

// logJSON logs a result as JSON (what a report shows).
func logJSON(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	t.Logf("%s: %s", what, b)
}

// noSightings stops the watcher and fails on any violation it saw.
func noSightings(t *testing.T, w *nbaudit.Watcher) {
	t.Helper()
	checks := w.Checks()
	s := w.Stop()
	t.Logf("NB watcher audited %d states, %d sightings", checks, len(s))
	if checks == 0 {
		t.Errorf("NB watcher audited no state")
	}
	for _, v := range s {
		t.Errorf("NB watcher at %s: %s: %s", v.At.Format(time.RFC3339Nano), v.Violation.Row, v.Violation.Problem)
	}
}

// checkStream judges a stream that must never lose its mark: no
// unmarked packet, no time without a marked packet beyond maxGap, at
// most 1% lost.
func checkStream(t *testing.T, r StreamResult, maxGap time.Duration) {
	t.Helper()
	logJSON(t, "stream "+r.Name, r)
	if r.Marks.Marked == 0 {
		t.Errorf("%s: no marked packet seen", r.Name)
	}
	if r.Marks.Unmarked != 0 {
		t.Errorf("%s: %d unmarked packets (first %s, last %s), want 0", r.Name, r.Marks.Unmarked,
			r.Marks.FirstUnmarked.Format(time.RFC3339Nano), r.Marks.LastUnmarked.Format(time.RFC3339Nano))
	}
	if r.Marks.Gap > maxGap {
		t.Errorf("%s: %v without a marked packet (from %s), want <= %v", r.Name, r.Marks.Gap, r.Marks.GapStart.Format(time.RFC3339Nano), maxGap)
	}
	if r.Sent == 0 || float64(r.Lost) > 0.01*float64(r.Sent) {
		t.Errorf("%s: lost %d of %d datagrams, want <= 1%%", r.Name, r.Lost, r.Sent)
	}
}

func mac(i int) string { return fmt.Sprintf("0a:58:0a:14:01:%02x", i) }
