package controller

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/qos"
)

// podRequests records the field selectors of the pod list and watch
// requests a controller sends to the API server.
type podRequests struct {
	mu  sync.Mutex
	sel []string // fieldSelector of each /api/v1/pods request ("" if none)
}

func (p *podRequests) wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/api/v1/pods" {
				p.mu.Lock()
				p.sel = append(p.sel, req.URL.Query().Get("fieldSelector"))
				p.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return out
}

// selectors are the distinct field selectors seen, sorted.
func (p *podRequests) selectors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.sel)
	slices.Sort(out)
	return slices.Compact(out)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A zone controller whose objects are on ipamless networks only (no
// selector destination can be accepted there) lists and watches its own
// node's pods alone: every pod request it sends selects
// spec.nodeName=<node>, its pod cache holds that node's pods only and no
// informer of other nodes' pods runs. An object with a podSelector
// destination on an IPAM network starts that informer: its address set
// holds the other node's pod's address. Deleting the object stops the
// informer; creating it again starts a new one and fills the set again;
// a controller started with the object already there fills it at startup.
func TestZoneControllerPodInformersFollowNeed(t *testing.T) {
	e := newEnv(t)
	nodeA, nodeB := "a-"+e.ns, "b-"+e.ns
	const plain, ipam = "plain", "ipam"
	e.addPorts(e.lsp(plain, "src"), e.lsp(ipam, "src-ip"))
	e.createNAD(plain, e.net, "")
	e.createPod("src", nodeA, plain, map[string]string{"tier": "gold"})
	e.createPod("other", nodeB, plain, map[string]string{"tier": "gold"})
	e.createNQ(e.nqos("plain", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46, cidrs: []string{"10.9.0.0/16"}}))

	var reqs podRequests
	nbc := e.dial()
	r := e.launchWith(Config{NB: nbc, Node: nodeA, Kube: reqs.wrap(e.cfg)}, nbc.Close)
	c := r.c
	e.waitRowsMatchCompiler(nodeA)
	e.eventually("controller ready", 30*time.Second, func() (bool, string) {
		err := c.NotReady()
		return err == nil, fmt.Sprint(err)
	})
	own := "spec.nodeName=" + nodeA
	if got := reqs.selectors(); !slices.Equal(got, []string{own}) {
		t.Errorf("pod requests' field selectors = %q, want only %q", got, own)
	}
	if keys := sorted(c.inf.pods.GetIndexer().ListKeys()); !slices.Equal(keys, []string{e.ns + "/src"}) {
		t.Errorf("pod cache = %v, want %s/src only", keys, e.ns)
	}
	if c.inf.remote.isRunning() || testutil.ToFloat64(c.metrics.remoteStarts) != 0 {
		t.Errorf("informer of other nodes' pods running %v, started %v times: want never on ipamless objects",
			c.inf.remote.isRunning(), testutil.ToFloat64(c.metrics.remoteStarts))
	}

	// A podSelector destination on an IPAM network needs every node's pods.
	ipamNet := e.net + "-ip"
	e.nb.MustNBCtl("ls-add", qos.SwitchName(ipamNet, qos.TopologyLocalnet))
	e.createNAD(ipam, ipamNet, "10.50.0.0/16")
	e.createIPAMPod("src-ip", nodeA, ipam, map[string]string{"tier": "gold"}, "10.50.0.10")
	e.createIPAMPod("db-b", nodeB, ipam, map[string]string{"app": "db"}, "10.50.0.22")
	dest := e.nqos("dest", 40, map[string]string{"tier": "gold"}, []string{ipamNet}, ruleSpec{dscp: 10, podSel: map[string]string{"app": "db"}})
	e.createNQ(dest)
	e.waitRemoteAddress(nodeA, "10.50.0.22")
	if !c.inf.remote.isRunning() || testutil.ToFloat64(c.metrics.remoteOn) != 1 {
		t.Fatalf("informer of other nodes' pods not running after a selector destination on an IPAM network")
	}
	remote := "spec.nodeName!=" + nodeA
	if got := reqs.selectors(); !slices.Equal(got, []string{remote, own}) {
		t.Errorf("pod requests' field selectors = %q, want %q and %q", got, own, remote)
	}

	e.deleteNQ("dest")
	e.eventually("informer of other nodes' pods stopped", 20*time.Second, func() (bool, string) {
		return !c.inf.remote.isRunning() && testutil.ToFloat64(c.metrics.remoteOn) == 0, "still running"
	})
	e.waitRowsMatchCompiler(nodeA)

	dest.ResourceVersion = ""
	e.createNQ(dest)
	e.waitRemoteAddress(nodeA, "10.50.0.22")
	if n := testutil.ToFloat64(c.metrics.remoteStarts); n != 2 {
		t.Errorf("informer of other nodes' pods started %v times, want 2", n)
	}
	r.stop(t)

	// At startup, with the object there: the first sync writes the set.
	nbc2 := e.dial()
	r2 := e.launchWith(Config{NB: nbc2, Node: nodeA}, nbc2.Close)
	e.eventually("restarted controller ready", 30*time.Second, func() (bool, string) {
		err := r2.c.NotReady()
		return err == nil, fmt.Sprint(err)
	})
	if !r2.c.inf.remote.isRunning() {
		t.Errorf("restarted controller ready without the informer of other nodes' pods")
	}
	if d := diffRows(e.ownedRows(), e.compiled(nodeA)); d != "" {
		t.Errorf("restarted controller ready, rows differ from the compiler's: %s", d)
	}
}

// compiled is what the compiler wants for this test's objects on node.
func (e *env) compiled(node string) qos.Desired { return qos.Compile(e.clusterInput(node)) }

// waitRemoteAddress waits until the NB rows equal the compiler's and an
// address set holds ip.
func (e *env) waitRemoteAddress(node, ip string) {
	e.t.Helper()
	want := e.waitRowsMatchCompiler(node)
	for _, as := range want.AddressSets {
		if slices.Contains(as.Addresses, ip) {
			return
		}
	}
	var sets []string
	for _, as := range want.AddressSets {
		sets = append(sets, strings.Join(as.Addresses, ","))
	}
	e.t.Fatalf("no address set holds %s: %v", ip, sets)
}
