package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
)

// env is one test's world: a fresh namespace on the shared API server, a
// fresh NB ovsdb-server, a test-side NB client, and a controller.
type env struct {
	t    testing.TB
	ctx  context.Context
	ns   string
	net  string // network name, unique per test
	cfg  *rest.Config
	kube kubernetes.Interface
	dyn  dynamic.Interface
	nb   *nbtest.Server
	nbc  *ovnnb.Client
	ctrl *running
}

// running is a controller started by the test.
type running struct {
	c       *Controller
	closeNB func() // closes the controller's NB client once Run returned
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
}

func newEnv(t testing.TB) *env {
	t.Helper()
	cfg := requireCluster(t)
	e := &env{t: t, ctx: context.Background(), cfg: cfg, nb: nbtest.Start(t)}
	e.kube = kubernetes.NewForConfigOrDie(cfg)
	e.dyn = dynamic.NewForConfigOrDie(cfg)
	id := runID(t)
	e.ns = "t-" + id
	e.net = "net-" + id
	if _, err := e.kube.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", e.ns, err)
	}
	// Namespaces never finish deleting without a controller-manager; the
	// NetworkQoS objects are removed so no other controller sees them.
	t.Cleanup(func() { e.deleteAllNetworkQoS() })
	e.nbc = e.dial()
	e.nb.MustNBCtl("ls-add", e.switchName())
	return e
}

func runID(t testing.TB) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func (e *env) dial() *ovnnb.Client { return e.dialTo(e.nb) }

// dialTo connects a client to srv, closed at test end.
func (e *env) dialTo(srv *nbtest.Server) *ovnnb.Client {
	e.t.Helper()
	c, err := ovnnb.Dial(e.ctx, srv.Addr(), slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatalf("dial NB %s: %v", srv.Addr(), err)
	}
	e.t.Cleanup(c.Close)
	return c
}

func (e *env) switchName() string { return qos.SwitchName(e.net, "localnet") }

// start runs a controller on the test's NB (own NB client) until stop or
// test end.
func (e *env) start(node string) *Controller {
	e.t.Helper()
	e.ctrl = e.startOn(e.nb, node)
	return e.ctrl.c
}

// startOn runs a controller for node on srv (own NB client), stopped at
// test end at the latest; it returns once the controller is ready.
func (e *env) startOn(srv *nbtest.Server, node string) *running {
	e.t.Helper()
	r := e.launch(e.dialTo(srv), node)
	e.eventually("controller ready", 30*time.Second, func() (bool, string) {
		if err := r.c.NotReady(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return r
}

// launch runs a controller for node on nbc, stopped at test end at the
// latest; it returns at once.
func (e *env) launch(nbc *ovnnb.Client, node string) *running {
	e.t.Helper()
	return e.launchWith(Config{NB: nbc, Node: node}, nbc.Close)
}

// launchDialing is launch with the controller dialing srv itself while
// its informer caches fill (Config.DialNB), as nqos-controller does.
func (e *env) launchDialing(srv *nbtest.Server, node string) *running {
	e.t.Helper()
	var nbc *ovnnb.Client // set by the dial; read after Run returned
	dial := func(ctx context.Context) (NB, error) {
		c, err := ovnnb.Dial(ctx, srv.Addr(), slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		nbc = c
		return c, nil
	}
	return e.launchWith(Config{DialNB: dial, Node: node}, func() {
		if nbc != nil {
			nbc.Close()
		}
	})
}

func (e *env) launchWith(cfg Config, closeNB func()) *running {
	e.t.Helper()
	if cfg.Kube == nil {
		cfg.Kube = e.cfg
	}
	cfg.Log = slog.New(slog.NewTextHandler(testWriter{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := New(cfg)
	if err != nil {
		e.t.Fatalf("controller.New: %v", err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	r := &running{c: c, closeNB: closeNB, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	e.t.Cleanup(func() { r.stop(e.t) })
	return r
}

// stop stops the controller of the last start.
func (e *env) stop() {
	if e.ctrl == nil {
		return
	}
	r := e.ctrl
	e.ctrl = nil
	r.stop(e.t)
}

// stop cancels the controller and waits for Run to return (once).
func (r *running) stop(t testing.TB) {
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("controller Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller Run did not return 30s after cancel")
		}
		r.closeNB()
	})
}

// eventually polls cond every 20ms until it holds or timeout passes.
func (e *env) eventually(what string, timeout time.Duration, cond func() (bool, string)) {
	e.t.Helper()
	eventually(e.t, what, timeout, cond)
}

// eventually polls cond (poll.Until, default interval) until it holds;
// after timeout it fails t with what and cond's last detail.
func eventually(t testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	err := poll.Until(context.Background(), timeout, 0, what, func(context.Context) (bool, error) {
		ok, detail := cond()
		if !ok {
			return false, poll.Retry("%s", detail)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// addPorts creates LSPs on the test switch.
func (e *env) addPorts(names ...string) {
	e.t.Helper()
	var args []string
	for _, n := range names {
		args = append(args, "--", "lsp-add", e.switchName(), n)
	}
	if len(args) > 0 {
		e.nb.MustNBCtl(args[1:]...)
	}
}

// ownedRows is the test NB client's view restricted to this test's
// namespace; a failed read fails the test.
func (e *env) ownedRows() qos.Desired {
	e.t.Helper()
	d, err := e.nbc.Rows(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return filterDesired(d, e.ns)
}

// filterDesired keeps rows owned by objects of namespace ns.
func filterDesired(d qos.Desired, ns string) qos.Desired {
	prefix := ns + ":"
	out := qos.Desired{}
	for _, pg := range d.PortGroups {
		if strings.HasPrefix(pg.ExternalIDs[qos.ObjectNameKey], prefix) {
			out.PortGroups = append(out.PortGroups, pg)
		}
	}
	for _, as := range d.AddressSets {
		if strings.HasPrefix(as.ExternalIDs[qos.ObjectNameKey], prefix) {
			out.AddressSets = append(out.AddressSets, as)
		}
	}
	for _, q := range d.QoS {
		if strings.HasPrefix(q.ExternalIDs[qos.ObjectNameKey], prefix) {
			out.QoS = append(out.QoS, q)
		}
	}
	return out
}

// diffRows compares the NB rows with the compiler's; "" when equal.
// QoS rows are compared in k8s.ovn.org/id order: ovnnb.Rows and
// qos.Compile sort them by different keys.
func diffRows(got, want qos.Desired) string {
	byID := func(rows []qos.QoSRow) {
		sort.Slice(rows, func(i, j int) bool {
			return rows[i].ExternalIDs[qos.PrimaryIDKey] < rows[j].ExternalIDs[qos.PrimaryIDKey]
		})
	}
	byID(got.QoS)
	byID(want.QoS)
	return cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(qos.Desired{}, "NetworkQoS", "Warnings"))
}

// testWriter sends controller logs to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
