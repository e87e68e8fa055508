package nettest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/testenv"
)

// OVS is a private Open vSwitch (own database, rundir and logs) running in
// a namespace.
type OVS struct {
	t     testing.TB
	Netns string
	Dir   string
	DB    string // "unix:<dir>/db.sock"
}

// StartOVS starts ovsdb-server and ovs-vswitchd inside netns with their own
// directory and kills both at cleanup. It gates the test on the OVS
// binaries (internal/testenv).
func (b *Bed) StartOVS(netns string) *OVS {
	b.t.Helper()
	testenv.Binaries(b.t, "ovsdb-server", "ovs-vswitchd", "ovsdb-tool", "ovs-vsctl", "ovs-ofctl")
	inst, _, err := ovninstall.Current(context.Background())
	testenv.Check(b.t, "OVS for "+netns, err)
	dir, err := os.MkdirTemp("", "nqos-"+b.RunID+"-ovs-")
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { os.RemoveAll(dir) })
	o := &OVS{t: b.t, Netns: netns, Dir: dir, DB: "unix:" + filepath.Join(dir, "db.sock")}
	b.Run("ovsdb-tool", "create", filepath.Join(dir, "conf.db"), inst.VSwitchSchema())
	o.daemon("ovsdb-server", filepath.Join(dir, "conf.db"), "--remote=p"+o.DB)
	if err := poll.Until(context.Background(), 10*time.Second, 20*time.Millisecond, "ovsdb-server answering", func(context.Context) (bool, error) {
		if _, err := o.vsctl("--no-wait", "init"); err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	}); err != nil {
		b.t.Fatalf("ovsdb-server in %s not ready: %v", netns, err)
	}
	o.daemon("ovs-vswitchd", o.DB)
	return o
}

// daemon starts one OVS daemon in the foreground (as a child) and registers
// its termination.
func (o *OVS) daemon(prog string, args ...string) {
	o.t.Helper()
	args = append(args, "--unixctl="+filepath.Join(o.Dir, prog+".ctl"),
		"--log-file="+filepath.Join(o.Dir, prog+".log"), "-vconsole:off")
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+o.Dir, "OVS_DBDIR="+o.Dir, "OVS_LOGDIR="+o.Dir)
	if err := netns.Named(o.Netns).Start(cmd); err != nil {
		o.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	o.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if o.t.Failed() {
			if log, err := os.ReadFile(filepath.Join(o.Dir, prog+".log")); err == nil {
				o.t.Logf("%s log:\n%s", prog, tail(string(log), 3000))
			}
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (o *OVS) vsctl(args ...string) (string, error) {
	return Output(exec.Command("ovs-vsctl", append([]string{"--db=" + o.DB, "--timeout=10"}, args...)...))
}

// Vsctl runs ovs-vsctl against this OVS and fails the test on error.
func (o *OVS) Vsctl(args ...string) string {
	o.t.Helper()
	out, err := o.vsctl(args...)
	if err != nil {
		o.t.Fatal(err)
	}
	return out
}

// Mgmt returns the OpenFlow management target of a bridge.
func (o *OVS) Mgmt(bridge string) string {
	return "unix:" + filepath.Join(o.Dir, bridge+".mgmt")
}

// Ofctl runs `ovs-ofctl -O OpenFlow13 <cmd> <bridge mgmt> args...`.
func (o *OVS) Ofctl(cmd, bridge string, args ...string) string {
	o.t.Helper()
	out, err := Output(exec.Command("ovs-ofctl", append([]string{"-O", "OpenFlow13", cmd, o.Mgmt(bridge)}, args...)...))
	if err != nil {
		o.t.Fatal(err)
	}
	return out
}

// AddNetdevBridge adds a netdev-datapath bridge speaking OpenFlow 1.3 with
// the given ports (ofport 1, 2, ... in order) and waits for its OpenFlow
// socket.
func (o *OVS) AddNetdevBridge(bridge string, ports ...string) {
	o.t.Helper()
	args := []string{"add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev", "protocols=OpenFlow13"}
	for i, p := range ports {
		args = append(args, "--", "add-port", bridge, p, "--", "set", "interface", p, fmt.Sprintf("ofport_request=%d", i+1))
	}
	o.Vsctl(args...)
	if err := poll.Until(context.Background(), 10*time.Second, 20*time.Millisecond, "OpenFlow socket of "+bridge, func(context.Context) (bool, error) {
		if _, err := Output(exec.Command("ovs-ofctl", "-O", "OpenFlow13", "show", o.Mgmt(bridge))); err != nil {
			return false, poll.Retry("%v", err)
		}
		return true, nil
	}); err != nil {
		o.t.Fatalf("bridge %s in %s: %v", bridge, o.Netns, err)
	}
}
