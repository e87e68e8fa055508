package cni

import (
	"strings"
	"testing"
)

func TestHostIfName(t *testing.T) {
	const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	a, b := HostIfName(cid, "pod1"), HostIfName(cid, "pod2")
	for _, n := range []string{a, b} {
		if len(n) != 15 || !strings.HasPrefix(n, hostPrefix) {
			t.Errorf("HostIfName = %q: want 15 characters starting with %s", n, hostPrefix)
		}
	}
	if a == b || a == HostIfName(cid+"0", "pod1") {
		t.Errorf("HostIfName collides: %s %s", a, b)
	}
	if a != HostIfName(cid, "pod1") {
		t.Errorf("HostIfName is not deterministic")
	}
}

func TestGeneratedMAC(t *testing.T) {
	seen := map[string]bool{}
	for _, ifname := range []string{"net1", "net2", "net3", "pod1", "pod2"} {
		m := GeneratedMAC("cid", ifname)
		if len(m) != 6 || m[0]&1 != 0 || m[0]&2 == 0 {
			t.Errorf("GeneratedMAC(%s) = %s: want a locally administered unicast MAC", ifname, m)
		}
		if seen[m.String()] {
			t.Errorf("GeneratedMAC(%s) = %s repeats", ifname, m)
		}
		seen[m.String()] = true
		if GeneratedMAC("cid", ifname).String() != m.String() {
			t.Errorf("GeneratedMAC(%s) is not deterministic", ifname)
		}
	}
}

func TestDecodeInterface(t *testing.T) {
	for _, tc := range []struct {
		out, ofport, ifaceID string
		wantErr              bool
	}{
		{out: `{"data":[[3,["map",[["iface-id","vms.blue_vms_a"],["nqos-cni/pod","vms/a"]]]]],"headings":["ofport","external_ids"]}`,
			ofport: "3", ifaceID: "vms.blue_vms_a"},
		{out: `{"data":[[["set",[]],["map",[]]]],"headings":["ofport","external_ids"]}`, ofport: "[]"},
		{out: `{"data":[],"headings":["ofport","external_ids"]}`, wantErr: true},
		{out: `{"data":[[1,"x"]],"headings":["ofport","external_ids"]}`, wantErr: true},
	} {
		ofport, ids, err := decodeInterface(tc.out)
		if (err != nil) != tc.wantErr {
			t.Errorf("decodeInterface(%s) error %v, want error %v", tc.out, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && (ofport != tc.ofport || ids["iface-id"] != tc.ifaceID) {
			t.Errorf("decodeInterface(%s) = %s, %v; want %s, iface-id %s", tc.out, ofport, ids, tc.ofport, tc.ifaceID)
		}
	}
}
