package controller

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/controller/benchtest"
	"github.com/nqos/nqos/internal/qos"
)

// latencyPods is the sample size of BenchmarkLSPToPortGroup.
const latencyPods = 200

// BenchmarkLSPToPortGroup measures, for pods selected before their LSP
// exists, the time from the LSP insert committed in the NB to the port
// being a port-group member (both observed by an independent OVSDB
// monitor), sequentially over 200 pods; reports p50/p99.
func BenchmarkLSPToPortGroup(b *testing.B) {
	e := newEnv(b)
	e.start("")
	e.createNAD(nadName, e.net, "")
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46}))
	w := startPGWatch(b, e.nb.Addr())
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		names := make([]string, latencyPods)
		benchtest.Parallel(b, latencyPods, 8, func(k int) error {
			names[k] = fmt.Sprintf("vm-%d-%d", i, k)
			e.createPod(names[k], "node-a", nadName, map[string]string{"tier": "gold"})
			return nil
		})
		e.waitConditions("gold", acceptedTrue, cond{readyTrue.typ, "False", reasonPortsPending})
		b.StartTimer()
		for _, n := range names {
			lsp := e.lsp(nadName, n)
			e.addPorts(lsp)
			if err := w.waitFor(10*time.Second, func() bool { _, ok := w.membership(lsp); return ok }); err != nil {
				b.Fatalf("port %s never joined the port group: %v", lsp, err)
			}
			w.mu.Lock()
			d, _ := w.membership(lsp)
			w.mu.Unlock()
			lat = append(lat, d)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(float64(len(lat)), "samples")
}

func percentile(sorted []time.Duration, p int) time.Duration {
	idx := (len(sorted)*p+99)/100 - 1
	return sorted[max(idx, 0)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Startup benchmark shape: 100 namespaces x (10 NetworkQoS + 100 pods)
// over 10 localnet networks; each object selects 10 pods on one network,
// priorities are unique per switch.
const (
	benchNamespaces = 100
	benchNetworks   = 10
	benchPodsPerNS  = 100
)

// startupWorld is the API-side fixture of BenchmarkStartupSync.
type startupWorld struct {
	e        *env
	nadNS    string
	nets     []string
	lsps     []string
	objects  int
	podCount int
	qosRows  int // QoS rows the fleet compiles to
}

func newStartupWorld(b *testing.B) *startupWorld { return newStartupWorldPerVM(b, false) }

// newStartupWorldPerVM is the startup fleet; with perVM the objects of
// network 0 (10%) are bandwidth-scope per-port with a capped rule, so
// each of them compiles to one QoS row per selected pod (10).
func newStartupWorldPerVM(b *testing.B, perVM bool) *startupWorld {
	e := newEnv(b)
	sw := &startupWorld{e: e, nadNS: e.ns}
	for j := range benchNetworks {
		net := fmt.Sprintf("%s-%d", e.net, j)
		sw.nets = append(sw.nets, net)
		e.createNAD(fmt.Sprintf("nad-%d", j), net, "")
	}
	nss := make([]string, benchNamespaces)
	benchtest.Parallel(b, benchNamespaces, 8, func(i int) error {
		nss[i] = fmt.Sprintf("%s-b%d", e.ns, i)
		_, err := e.kube.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nss[i]}}, metav1.CreateOptions{})
		return err
	})
	b.Cleanup(func() {
		for _, ns := range nss {
			_ = e.dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(ns).DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		}
	})
	sw.lsps = make([]string, benchNamespaces*benchPodsPerNS)
	benchtest.Parallel(b, benchNamespaces*benchPodsPerNS, 16, func(i int) error {
		ns, k := nss[i/benchPodsPerNS], i%benchPodsPerNS
		return sw.createPod(ns, k, i)
	})
	benchtest.Parallel(b, benchNamespaces*benchNetworks, 16, func(i int) error {
		ns, j := nss[i/benchNetworks], i%benchNetworks
		rule := ruleSpec{dscp: 10 + j}
		if perVM && j == 0 {
			rule.rate, rule.burst = 100000, 5000
		}
		nq := e.nqos("q"+strconv.Itoa(j), i/benchNetworks, map[string]string{"group": strconv.Itoa(j)}, []string{sw.nets[j]}, rule)
		nq.Namespace = ns
		if perVM && j == 0 {
			nq.Annotations = map[string]string{qos.BandwidthScopeAnnotation: qos.BandwidthScopePerPort}
		}
		return e.create(v1alpha1.GroupVersionResource(), nq)
	})
	sw.objects = benchNamespaces * benchNetworks
	sw.podCount = len(sw.lsps)
	sw.qosRows = sw.objects
	if perVM {
		perObject := benchPodsPerNS / benchNetworks
		sw.qosRows += benchNamespaces * (perObject - 1)
	}
	return sw
}

func (sw *startupWorld) createPod(ns string, k, i int) error {
	j := k % benchNetworks
	nad := fmt.Sprintf("nad-%d", j)
	name := "vm-" + strconv.Itoa(k)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"group": strconv.Itoa(j)},
			Annotations: map[string]string{nadv1.NetworksAnnotation: sw.nadNS + "/" + nad}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	if _, err := sw.e.kube.CoreV1().Pods(ns).Create(sw.e.ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s/%s: %w", ns, name, err)
	}
	sw.lsps[i] = qos.SwitchName(sw.nets[j], "localnet") + " " + qos.LogicalPortName(sw.nadNS, nad, ns, name)
	return nil
}

// seedNB creates the switches and every LSP, 500 per ovn-nbctl call.
func (sw *startupWorld) seedNB() {
	e := sw.e
	for _, net := range sw.nets {
		e.nb.MustNBCtl("--may-exist", "ls-add", qos.SwitchName(net, "localnet"))
	}
	for start := 0; start < len(sw.lsps); start += 500 {
		var args []string
		for _, l := range sw.lsps[start:min(start+500, len(sw.lsps))] {
			sw, port, _ := strings.Cut(l, " ")
			args = append(args, "--", "lsp-add", sw, port)
		}
		e.nb.MustNBCtl(args[1:]...)
	}
}

// maxStartupTxns bounds the NB transactions of a start of the benchmark's
// fleet (the batches of the startup sync; the reconciles after it commit
// none).
const maxStartupTxns = 20

// BenchmarkStartupSync measures a controller start against 1000
// NetworkQoS x 10000 pods with every LSP present and an empty set of
// QoS rows: time until every row is in the NB, until the controller is
// ready, until every object is Ready (status written), NB transactions
// (at most maxStartupTxns), and the process's peak RSS during the sync.
func BenchmarkStartupSync(b *testing.B) { benchStartupSync(b, newStartupWorld(b)) }

// BenchmarkStartupSyncPerVM is BenchmarkStartupSync with 10% of the
// objects bandwidth-scope per-port (1900 QoS rows instead of 1000), and
// also reports the QoS rows and the NB's size (a backup of its current
// contents).
func BenchmarkStartupSyncPerVM(b *testing.B) {
	sw := newStartupWorldPerVM(b, true)
	benchStartupSync(b, sw)
	b.ReportMetric(float64(sw.qosRows), "qos-rows")
	b.ReportMetric(float64(nbSize(b, sw.e))/(1<<20), "nb-MiB")
}

// nbSize is the size in bytes of a backup of the NB's current contents.
func nbSize(b *testing.B, e *env) int64 {
	out, err := exec.Command("ovsdb-client", "backup", e.nb.Addr(), "OVN_Northbound").Output()
	if err != nil {
		b.Fatalf("ovsdb-client backup: %v", err)
	}
	return int64(len(out))
}

func benchStartupSync(b *testing.B, sw *startupWorld) {
	sw.seedNB()
	e := sw.e
	w := startPGWatch(b, e.nb.Addr())
	b.StopTimer()
	for range b.N {
		// Each iteration starts from an empty set of owned rows.
		keys, err := e.nbc.OwnedKeys(e.ctx)
		must(e, err)
		for _, k := range keys {
			must(e, e.nbc.Teardown(e.ctx, k))
		}
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS(b)
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		w.mu.Lock()
		before := w.updates
		w.mu.Unlock()
		b.StartTimer()
		// The clock runs from launch (the controller dials the NB while
		// its caches fill, as nqos-controller does): rows-s is when the NB holds every
		// member and QoS row (watched on its own monitor), synced-s when
		// the controller reports ready (caches synced, startup GC and
		// migration done, every startup object reconciled once).
		start := time.Now()
		e.ctrl = e.launchDialing(e.nb, "")
		c := e.ctrl.c
		err = w.waitFor(10*time.Minute, func() bool {
			m, r := w.totals()
			return m == sw.podCount && r == sw.qosRows
		})
		rows := time.Since(start)
		if err != nil {
			m, r := w.totals()
			b.Fatalf("NB did not converge: %v (%d members, %d QoS rows)", err, m, r)
		}
		e.eventually("controller ready", 10*time.Minute, func() (bool, string) {
			if err := c.NotReady(); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		synced := time.Since(start)
		e.eventually("every object Ready", 10*time.Minute, func() (bool, string) {
			n := readyCount(c)
			return n == sw.objects, fmt.Sprintf("%d/%d ready", n, sw.objects)
		})
		ready := time.Since(start)
		b.StopTimer()
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		w.mu.Lock()
		txns := w.updates - before
		w.mu.Unlock()
		if txns > maxStartupTxns {
			b.Errorf("the start committed %d NB transactions, want at most %d", txns, maxStartupTxns)
		}
		b.ReportMetric(synced.Seconds(), "synced-s")
		b.ReportMetric(rows.Seconds(), "rows-s")
		b.ReportMetric(ready.Seconds(), "ready-s")
		b.ReportMetric(float64(txns), "nb-txns")
		b.ReportMetric(testutil.ToFloat64(c.metrics.nbWrites), "apply-txns")
		b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(int64(ms1.HeapInuse)-int64(ms0.HeapInuse))/(1<<20), "heap-growth-MiB")
		e.stop()
	}
}

func readyCount(c *Controller) int {
	n := 0
	for _, obj := range c.inf.nqos.GetIndexer().List() {
		nq := obj.(*v1alpha1.NetworkQoS)
		if meta.IsStatusConditionTrue(nq.Status.Conditions, c.readyType()) {
			n++
		}
	}
	return n
}

// resetPeakRSS resets VmHWM of this process (Linux clear_refs 5).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0o200); err != nil {
		b.Logf("cannot reset peak RSS: %v", err)
	}
}

// peakRSS reads VmHWM (bytes) of this process.
func peakRSS(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
