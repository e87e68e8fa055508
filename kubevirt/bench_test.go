package kubevirt

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/capture/live"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
	"github.com/nqos/nqos/topo/localnet"
)

// withAndWithoutKube runs bench as the sub-benchmarks ovn (without the
// Kubernetes API) and ovn+kube (with it: needs the kube binaries).
func withAndWithoutKube(b *testing.B, bench func(b *testing.B, withKube bool)) {
	b.Run("ovn", func(b *testing.B) { bench(b, false) })
	b.Run("ovn+kube", func(b *testing.B) {
		_, err := kubeapi.BinDir()
		testenv.Check(b, "the kube-apiserver and etcd binaries", err)
		bench(b, true)
	})
}

// BenchmarkBootToFirstMarkedPacket measures a 2-node boot (without and
// with the Kubernetes API), one VM, a port group + DSCP QoS row, until the
// first DSCP 46 packet of the VM is seen on its node's uplink. Target:
// <= 10 s.
func BenchmarkBootToFirstMarkedPacket(b *testing.B) { withAndWithoutKube(b, bootToMark) }

func bootToMark(b *testing.B, withKube bool) {
	var err error
	var sumMark, sumBoot, sumVM time.Duration
	for i := 0; i < b.N; i++ {
		ctx := context.Background()
		start := time.Now()
		tb := localnet.StartTB(b, localnet.Spec{RunID: "b1", WithKube: withKube})
		booted := time.Since(start)
		var kube kubernetes.Interface
		if withKube {
			if kube, err = kubernetes.NewForConfig(tb.RESTConfig()); err != nil {
				b.Fatal(err)
			}
		}
		m := NewManager(tb, kube)
		vm := testVM("vm1", "node1", "02:00:00:00:03:01", "10.20.1.1/16", nil)
		if err := m.Create(ctx, vm, CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		vmUp := time.Since(start)
		in, _ := m.Get("vms", "vm1")
		if _, err := tb.NBCtl(ctx, "pg-add", qosPG, in.LSPs[0], "--", "qos-add", tb.Networks()[0].Switch, "to-lport", "10600",
			"inport == @"+qosPG+" && (ip4 || ip6)", "dscp=46"); err != nil {
			b.Fatal(err)
		}
		ns, ifname, _ := tb.UplinkCapturePoint("node1")
		var w *live.Watch
		w, err = live.StartWatch(ns, ifname)
		if err != nil {
			b.Fatal(err)
		}
		backup, _ := tb.Host("backup")
		var p *localnet.Probe
		p, err = localnet.StartProbe(ctx, m.Guest(vm), netip.MustParseAddrPort("10.20.1.1:7100"), backup.Netns,
			netip.AddrPortFrom(netip.MustParseAddr(backup.IPv4), 7100), time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		err = poll.Until(ctx, 30*time.Second, 10*time.Millisecond, "first DSCP 46 packet on node1's uplink", func(context.Context) (bool, error) {
			_, ok := firstMarked(w, netip.MustParseAddr("10.20.1.1"), qosDSCP, time.Time{})
			return ok, w.Err()
		})
		elapsed := time.Since(start)
		b.StopTimer()
		p.Stop()
		w.Close()
		if err != nil {
			b.Fatal(err)
		}
		sumMark, sumBoot, sumVM = sumMark+elapsed, sumBoot+booted, sumVM+vmUp
		if err := tb.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(sumMark.Seconds()/n, "s-boot-to-mark")
	b.ReportMetric(sumBoot.Seconds()/n, "s-boot")
	b.ReportMetric(sumVM.Seconds()/n, "s-boot+vm-up")
}

// BenchmarkIdleFootprint boots a 2-node testbed with one VM per node and
// reports the summed RSS of its processes and their CPU use over 3 s
// idle, without and with the Kubernetes API.
func BenchmarkIdleFootprint(b *testing.B) { withAndWithoutKube(b, idleFootprint) }

func idleFootprint(b *testing.B, withKube bool) {
	ctx := context.Background()
	tb := localnet.StartTB(b, localnet.Spec{RunID: "b2", WithKube: withKube})
	m := NewManager(tb, nil)
	for i, node := range []string{"node1", "node2"} {
		vm := testVM(fmt.Sprintf("vm%d", i+1), node, fmt.Sprintf("02:00:00:00:04:0%d", i+1), fmt.Sprintf("10.20.1.%d/16", i+1), nil)
		if err := m.Create(ctx, vm, CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := tb.WaitHVSync(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pids := tb.DaemonPIDs()
		cpu0, wall0 := cpuTicks(b, pids), time.Now()
		time.Sleep(3 * time.Second) // the measurement window, not synchronisation
		cpu1, wall := cpuTicks(b, pids), time.Since(wall0)
		var rss int64
		for _, pid := range pids {
			rss += rssKiB(b, pid)
		}
		b.ReportMetric(float64(rss)/1024, "MiB-rss")
		b.ReportMetric(100*float64(cpu1-cpu0)/100/wall.Seconds(), "%cpu-of-core")
		b.ReportMetric(float64(len(pids)), "daemons")
	}
}

// cpuTicks sums utime+stime (clock ticks, 100/s) of the processes.
func cpuTicks(b *testing.B, pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + s
	}
	return sum
}

func rssKiB(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
