package qos_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/qos"
)

// OVN 25.03's NB schema widened QoS.action:dscp from 0..63 to 0..2^32-1:
// it stores dscp=64, and northd then installs the flow without a mark.
// The compiler and ovnnb's validation are the only guards left.

const dscpBoundObject = "vms/backup-deprioritization"

// compileWithDSCP compiles the OKEP worked example with the backup
// object's second rule set to dscp and returns that object's result.
func compileWithDSCP(t *testing.T, dscp int) qos.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "okep-worked-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := qos.DecodeManifests(f, "okep-worked-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, nq := range in.NetworkQoSes {
		if nq.Namespace+"/"+nq.Name == dscpBoundObject {
			nq.Spec.Egress[1].DSCP = dscp
		}
	}
	for _, r := range qos.CompileAll(in) {
		if r.Key() == dscpBoundObject {
			return r
		}
	}
	t.Fatalf("%s not compiled", dscpBoundObject)
	return qos.Result{}
}

// TestDSCP64Refused: the compiler refuses dscp 64 naming the object and
// the field, and produces no rows, where dscp 63 compiles.
func TestDSCP64Refused(t *testing.T) {
	ok := compileWithDSCP(t, 63)
	if ok.Err != nil || len(ok.QoS) == 0 {
		t.Fatalf("dscp 63: err %v, %d QoS rows; want accepted with rows", ok.Err, len(ok.QoS))
	}
	r := compileWithDSCP(t, 64)
	want := dscpBoundObject + ": spec.egress[1].dscp: 64 out of range 0..63"
	if r.Err == nil || r.Err.Error() != want {
		t.Fatalf("dscp 64: err = %v, want %q", r.Err, want)
	}
	if r.Accepted.Status != "False" || r.Accepted.Reason != qos.ReasonInvalidSpec || !strings.Contains(r.Accepted.Message, "spec.egress[1].dscp") {
		t.Errorf("dscp 64: Accepted = %+v, want False/%s naming the field", r.Accepted, qos.ReasonInvalidSpec)
	}
	if len(r.QoS)+len(r.PortGroups)+len(r.AddressSets) != 0 {
		t.Errorf("dscp 64: %d QoS rows, %d port groups, %d address sets; want none", len(r.QoS), len(r.PortGroups), len(r.AddressSets))
	}
}

// TestDSCP64NeverReachesNB runs against a real NB of each OVN version:
// the schema alone refuses dscp=64 on 23.03 and stores it on 25.03, while
// the rows the controller would write, with dscp 64, are refused by Apply
// naming the field, and nothing is written.
func TestDSCP64NeverReachesNB(t *testing.T) {
	ovninstall.ForEach(t, func(t *testing.T, inst ovninstall.Install) {
		valid := compileWithDSCP(t, 63)
		if len(valid.QoS) == 0 {
			t.Fatal("dscp 63: no QoS rows compiled")
		}
		srv := nbtest.Start(t)
		sw := valid.QoS[0].Switch
		srv.MustNBCtl("ls-add", sw)
		// A raw row (ovn-nbctl's qos-add checks 0..63 itself).
		_, err := srv.NBCtl("--id=@q", "create", "QoS", "priority=100", "direction=to-lport", "match=ip4", "action:dscp=64",
			"--", "add", "Logical_Switch", sw, "qos_rules", "@q")
		switch inst.Version {
		case ovninstall.V2303:
			if err == nil || !strings.Contains(err.Error(), "64 is not in the valid range") {
				t.Fatalf("23.03 schema: QoS action:dscp=64: err = %v, want a constraint violation", err)
			}
		default:
			if err != nil {
				t.Fatalf("%s schema: QoS action:dscp=64 refused (%v); the schema was expected to store it", inst.Version, err)
			}
			srv.MustNBCtl("clear", "Logical_Switch", sw, "qos_rules")
		}

		for _, pg := range valid.PortGroups {
			for _, p := range pg.Ports {
				srv.MustNBCtl("--may-exist", "lsp-add", sw, p)
			}
		}
		rows := append([]qos.QoSRow(nil), valid.QoS...)
		found := false
		for i := range rows {
			if rows[i].Action.DSCP == 63 {
				rows[i].Action.DSCP, found = 64, true
			}
		}
		if !found {
			t.Fatalf("no compiled row with dscp 63 in %+v", valid.QoS)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := ovnnb.Dial(ctx, srv.Addr(), slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		key := ovnnb.Key{Namespace: valid.Namespace, Name: valid.Name}
		res, err := c.Apply(ctx, key, ovnnb.ObjectRows{PortGroups: valid.PortGroups, AddressSets: valid.AddressSets, QoS: rows})
		if err == nil || !strings.Contains(err.Error(), "NetworkQoS "+dscpBoundObject) || !strings.Contains(err.Error(), "field action.dscp 64 is outside 0..63") {
			t.Fatalf("Apply with dscp 64: err = %v, want it refused naming the object and action.dscp", err)
		}
		if res.Changed {
			t.Errorf("Apply with dscp 64 reported a commit")
		}
		for _, table := range []string{"QoS", "Port_Group", "Address_Set"} {
			out, err := srv.NBCtl("--bare", "--columns=_uuid", "list", table)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != "" {
				t.Errorf("after the refused Apply, NB table %s has rows: %s", table, out)
			}
		}
	})
}
