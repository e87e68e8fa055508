package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/controller/benchtest"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/testenv"
)

// zoneBenchScaleEnv scales BenchmarkZones down (a fraction of the
// namespaces, so of the objects and pods; the zones stay 20) where the
// full size does not fit the time or the machine.
const zoneBenchScaleEnv = "NQOS_ZONEBENCH_SCALE"

// zoneBenchDestEnv=1 gives the networks subnets (pod IPs in each pod's
// pod-networks annotation) and each object a podSelector destination
// selecting its own 10 pods, spread over 10 nodes: every zone then needs
// the other nodes' pods (its informer of them runs), and a zone holds its
// rows only once each object's address set holds all 10 addresses.
const zoneBenchDestEnv = "NQOS_ZONEBENCH_DESTINATIONS"

// The full size: 20 zones (one node each), 100 namespaces x 10 networks
// = 1000 NetworkQoS, 100 pods per namespace = 10 000 pods, 500 per node.
const (
	zbZones      = 20
	zbNamespaces = 100
	zbNetworks   = 10
	zbPodsPerNS  = 100
)

// zoneBench is the cluster and the zones of one BenchmarkZones run.
type zoneBench struct {
	b      *testing.B
	ctx    context.Context
	api    *kubeapi.Server
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	zones  []*nbtest.Server
	nss    []string
	nets   []string
	nadNS  string
	lsps   [][]string // per zone: "<switch> <port>" of its node's pods
	nodeOf func(ns, k int) int
	dest   bool // zoneBenchDestEnv: subnets and podSelector destinations
}

// BenchmarkZones measures the interconnect layout at scale: one real
// kube-apiserver, 20 Northbounds (real ovsdb-servers with the OVN NB
// schema, each seeded with its node's logical switch ports) and 20 zone
// controllers started together, each a process of this test binary
// running the controller's Main (the code of nqos-controller) with
// --node <its node> on its zone's NB, against 1000 NetworkQoS x 10 000
// pods, 500 per node. Reported: the time from the start until every zone
// holds its rows (each object's QoS row and port group, the group holding
// exactly the zone's selected pods), the median zone's time, each zone
// controller's peak RSS (VmHWM) and its CPU time (user + system) from its
// start until every zone held its rows: the largest and the median. The
// networks are ipamless (no destination address sets), so each zone
// controller lists and watches only its own node's pods.
func BenchmarkZones(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: needs kube-apiserver, etcd and ovsdb-server")
	}
	_, err := kubeapi.BinDir()
	testenv.Check(b, "kube-apiserver and etcd binaries", err)
	scale := 1.0
	if s := os.Getenv(zoneBenchScaleEnv); s != "" {
		if scale, err = strconv.ParseFloat(s, 64); err != nil || scale <= 0 || scale > 1 {
			b.Fatalf("$%s=%q: want a fraction in (0, 1]", zoneBenchScaleEnv, s)
		}
	}
	nss := max(int(zbNamespaces*scale), 2)
	zb := newZoneBench(b, nss, os.Getenv(zoneBenchDestEnv) == "1")
	b.Logf("%d zones, %d NetworkQoS, %d pods (%d per zone), podSelector destinations on subnets networks: %v",
		zbZones, nss*zbNetworks, nss*zbPodsPerNS, nss*zbPodsPerNS/zbZones, zb.dest)
	for range b.N {
		zb.run()
	}
}

func newZoneBench(b *testing.B, namespaces int, dest bool) *zoneBench {
	zb := &zoneBench{b: b, ctx: context.Background(), nadNS: "nads", dest: dest}
	var files []string
	for _, f := range []string{"k8s.ovn.org_networkqoses.yaml", "k8s.cni.cncf.io_network-attachment-definitions.yaml", "k8s.ovn.org_clusteruserdefinednetworks.yaml"} {
		files = append(files, filepath.Join("..", "..", "..", "config", "crd", f))
	}
	dir, err := os.MkdirTemp("", "nqos-zonebench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	zb.api, err = kubeapi.Start(zb.ctx, kubeapi.Options{Dir: dir, CRDFiles: files})
	if err != nil {
		b.Fatalf("kube-apiserver: %v", err)
	}
	b.Cleanup(func() {
		if err := zb.api.Close(); err != nil {
			b.Errorf("kube-apiserver: %v", err)
		}
	})
	cfg := zb.api.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	zb.kube = kubernetes.NewForConfigOrDie(cfg)
	zb.dyn = dynamic.NewForConfigOrDie(cfg)
	for range zbZones {
		zb.zones = append(zb.zones, nbtest.Start(b))
	}
	// The 10 pods an object selects (k = j, j+10, ...) spread over 10
	// nodes; every node gets namespaces*zbPodsPerNS/zbZones pods.
	zb.nodeOf = func(ns, k int) int { return (k/zbNetworks + ns) % zbZones }
	zb.createWorld(namespaces)
	zb.seedZones()
	return zb
}

func nodeName(i int) string { return fmt.Sprintf("node%d", i+1) }

// createWorld creates the NADs, namespaces, pods and NetworkQoS objects.
func (zb *zoneBench) createWorld(namespaces int) {
	b := zb.b
	must(b, zb.createNS(zb.nadNS))
	for j := range zbNetworks {
		net := fmt.Sprintf("bench-%d", j)
		zb.nets = append(zb.nets, net)
		cni := map[string]string{"cniVersion": "1.0.0", "name": net, "type": "ovn-k8s-cni-overlay", "topology": "localnet",
			"physicalNetworkName": "physnet", "netAttachDefName": fmt.Sprintf("%s/nad-%d", zb.nadNS, j)}
		if zb.dest {
			cni["subnets"] = fmt.Sprintf("10.%d.0.0/16", j)
		}
		conf, _ := json.Marshal(cni)
		must(b, zb.create(nadv1.GroupVersionResource(), &nadv1.NetworkAttachmentDefinition{
			TypeMeta:   metav1.TypeMeta{APIVersion: nadv1.GroupName + "/" + nadv1.Version, Kind: nadv1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nad-%d", j), Namespace: zb.nadNS, Labels: map[string]string{"nqos-network": net}},
			Spec:       nadv1.Spec{Config: string(conf)},
		}))
	}
	zb.nss = make([]string, namespaces)
	for i := range zb.nss {
		zb.nss[i] = fmt.Sprintf("b%d", i)
	}
	benchtest.Parallel(b, namespaces, 8, func(i int) error { return zb.createNS(zb.nss[i]) })
	zb.lsps = make([][]string, zbZones)
	var mu sync.Mutex
	benchtest.Parallel(b, namespaces*zbPodsPerNS, 16, func(i int) error {
		ns, k := i/zbPodsPerNS, i%zbPodsPerNS
		lsp, err := zb.createPod(ns, k)
		if err == nil {
			mu.Lock()
			zb.lsps[zb.nodeOf(ns, k)] = append(zb.lsps[zb.nodeOf(ns, k)], lsp)
			mu.Unlock()
		}
		return err
	})
	benchtest.Parallel(b, namespaces*zbNetworks, 16, func(i int) error {
		ns, j := i/zbNetworks, i%zbNetworks
		group := map[string]string{"group": strconv.Itoa(j)}
		rule := v1alpha1.Rule{DSCP: 10 + j}
		if zb.dest {
			rule.Classifier = &v1alpha1.Classifier{To: []v1alpha1.Destination{{PodSelector: &metav1.LabelSelector{MatchLabels: group}}}}
		}
		return zb.create(v1alpha1.GroupVersionResource(), &v1alpha1.NetworkQoS{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: "q" + strconv.Itoa(j), Namespace: zb.nss[ns]},
			Spec: v1alpha1.Spec{
				NetworkSelectors: v1alpha1.NetworkSelectors{{
					NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
					NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
						NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"nqos-network": zb.nets[j]}},
					},
				}},
				PodSelector: metav1.LabelSelector{MatchLabels: group},
				Priority:    ns,
				Egress:      []v1alpha1.Rule{rule},
			},
		})
	})
}

func (zb *zoneBench) createNS(name string) error {
	_, err := zb.kube.CoreV1().Namespaces().Create(zb.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// createPod creates pod k of namespace ns on its node, attached to
// network k%10 (ipamless: a MAC only; with destinations also the address
// 10.<network>.<ns>.<k>), and returns its LSP.
func (zb *zoneBench) createPod(ns, k int) (string, error) {
	j := k % zbNetworks
	nad, name := fmt.Sprintf("nad-%d", j), "vm-"+strconv.Itoa(k)
	ips := ""
	if zb.dest {
		ips = fmt.Sprintf(`"ip_addresses":["10.%d.%d.%d/16"],`, j, ns, k)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: zb.nss[ns], Labels: map[string]string{"group": strconv.Itoa(j)},
			Annotations: map[string]string{
				nadv1.NetworksAnnotation: zb.nadNS + "/" + nad,
				"k8s.ovn.org/pod-networks": fmt.Sprintf(`{"%s/%s":{%s"mac_address":"0a:58:0a:%02x:%02x:%02x","role":"secondary"}}`,
					zb.nadNS, nad, ips, ns%256, k/256, k%256),
			}},
		Spec: corev1.PodSpec{NodeName: nodeName(zb.nodeOf(ns, k)), Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}
	if _, err := zb.kube.CoreV1().Pods(zb.nss[ns]).Create(zb.ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create pod %s/%s: %w", zb.nss[ns], name, err)
	}
	return qos.SwitchName(zb.nets[j], qos.TopologyLocalnet) + " " + qos.LogicalPortName(zb.nadNS, nad, zb.nss[ns], name), nil
}

func (zb *zoneBench) create(gvr schema.GroupVersionResource, obj any) error {
	return kubeapi.CreateTyped(zb.ctx, zb.dyn, gvr, obj)
}

// seedZones creates every network's switch in every zone and each
// node's pods' LSPs in its zone only, as ovnkube's zone controllers do.
func (zb *zoneBench) seedZones() {
	for z, srv := range zb.zones {
		for _, net := range zb.nets {
			srv.MustNBCtl("--may-exist", "ls-add", qos.SwitchName(net, qos.TopologyLocalnet))
		}
		for start := 0; start < len(zb.lsps[z]); start += 500 {
			var args []string
			for _, l := range zb.lsps[z][start:min(start+500, len(zb.lsps[z]))] {
				sw, port, _ := strings.Cut(l, " ")
				args = append(args, "--", "lsp-add", sw, port)
			}
			srv.MustNBCtl(args[1:]...)
		}
	}
}

// zoneProc is one zone controller process.
type zoneProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	rows time.Duration // start -> the zone held its rows
}

// run starts every zone controller, waits until every zone holds its
// rows, reads each process's peak RSS and stops them.
func (zb *zoneBench) run() {
	b := zb.b
	self, err := os.Executable()
	must(b, err)
	logDir := b.TempDir()
	clients := make([]*ovnnb.Client, zbZones)
	for z, srv := range zb.zones {
		clients[z], err = ovnnb.Dial(zb.ctx, srv.Addr(), slog.New(slog.DiscardHandler))
		must(b, err)
		defer clients[z].Close()
	}
	procs := make([]*zoneProc, zbZones)
	b.ResetTimer()
	start := time.Now()
	for z, srv := range zb.zones {
		procs[z] = zb.startZone(self, srv.Addr(), nodeName(z), filepath.Join(logDir, nodeName(z)+".log"))
	}
	defer stopZones(procs)
	err = poll.Until(zb.ctx, 20*time.Minute, 200*time.Millisecond, "every zone holds its rows", func(ctx context.Context) (bool, error) {
		left := 0
		for z, p := range procs {
			if p.rows > 0 {
				continue
			}
			select {
			case <-p.done:
				return false, fmt.Errorf("zone %s: controller exited: %v (log %s)", nodeName(z), p.cmd.ProcessState, filepath.Join(logDir, nodeName(z)+".log"))
			default:
			}
			ok, err := zb.holdsRows(clients[z], z)
			if err != nil {
				return false, err
			}
			if ok {
				p.rows = time.Since(start)
				continue
			}
			left++
		}
		return left == 0, nil
	})
	if err != nil {
		b.Fatalf("%v (logs in %s)", err, logDir)
	}
	b.StopTimer()
	var rows, cpus []time.Duration
	var rss []int64
	for z, p := range procs {
		hwm, err := peakRSS(p.cmd.Process.Pid)
		must(b, err)
		cpu, err := cpuTime(p.cmd.Process.Pid)
		must(b, err)
		rows, rss, cpus = append(rows, p.rows), append(rss, hwm), append(cpus, cpu)
		b.Logf("zone %s: rows after %v, peak RSS %.1f MiB, CPU %v", nodeName(z), p.rows.Round(time.Millisecond), float64(hwm)/(1<<20), cpu)
	}
	slices.Sort(rows)
	slices.Sort(rss)
	slices.Sort(cpus)
	b.ReportMetric(cpus[len(cpus)-1].Seconds(), "max-zone-cpu-s")
	b.ReportMetric(cpus[len(cpus)/2].Seconds(), "median-zone-cpu-s")
	b.ReportMetric(rows[len(rows)-1].Seconds(), "all-zones-rows-s")
	b.ReportMetric(rows[len(rows)/2].Seconds(), "median-zone-rows-s")
	b.ReportMetric(float64(rss[len(rss)-1])/(1<<20), "max-zone-peak-rss-MiB")
	b.ReportMetric(float64(rss[len(rss)/2])/(1<<20), "median-zone-peak-rss-MiB")
}

// holdsRows reports whether zone z's NB holds exactly the zone's rows:
// one QoS row and one port group per object, the groups together holding
// exactly the zone's pods' LSPs, and with destinations one address set
// per object holding its 10 pods' addresses.
func (zb *zoneBench) holdsRows(c *ovnnb.Client, z int) (bool, error) {
	d, err := c.Rows(zb.ctx)
	if err != nil {
		return false, fmt.Errorf("zone %s: rows: %w", nodeName(z), err)
	}
	objects := len(zb.nss) * zbNetworks
	if len(d.QoS) != objects || len(d.PortGroups) != objects {
		return false, nil
	}
	if zb.dest {
		addrs := 0
		for _, as := range d.AddressSets {
			addrs += len(as.Addresses)
		}
		if len(d.AddressSets) != objects || addrs != objects*zbPodsPerNS/zbNetworks {
			return false, nil
		}
	}
	var members []string
	for _, pg := range d.PortGroups {
		members = append(members, pg.Ports...)
	}
	want := make([]string, 0, len(zb.lsps[z]))
	for _, l := range zb.lsps[z] {
		_, port, _ := strings.Cut(l, " ")
		want = append(want, port)
	}
	slices.Sort(members)
	slices.Sort(want)
	return slices.Equal(members, want), nil
}

func (zb *zoneBench) startZone(self, nb, node, logPath string) *zoneProc {
	b := zb.b
	logf, err := os.Create(logPath)
	must(b, err)
	cmd := exec.Command(self, "--kubeconfig", zb.api.KubeconfigPath(), "--nb-address", nb, "--node", node, "--ovnkube-enable-network-qos=false")
	cmd.Env = append(os.Environ(), zoneControllerEnv+"=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(b, cmd.Start())
	p := &zoneProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p
}

// stopZones sends SIGTERM to every process and waits; a process still
// there after 30 s is killed.
func stopZones(procs []*zoneProc) {
	for _, p := range procs {
		if p != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range procs {
		if p == nil {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// peakRSS reads VmHWM (bytes) of process pid.
func peakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak RSS of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak RSS of pid %d: %q: %w", pid, line, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("peak RSS of pid %d: no VmHWM line", pid)
}

// cpuTime reads the user plus system CPU time process pid used so far
// (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s: Linux's
// USER_HZ on every architecture Go supports here).
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of pid %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces: count from its ")".
	i := strings.LastIndexByte(string(raw), ')')
	f := strings.Fields(string(raw)[i+1:]) // f[0] is field 3 (state)
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("CPU time of pid %d: short stat line %q", pid, raw)
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 (utime) and 15 (stime)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time of pid %d: %q: %w", pid, s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
