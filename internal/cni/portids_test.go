package cni

import (
	"net"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/google/go-cmp/cmp"
)

func TestPortIDs(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0, 0, 0, 0x0a, 0x01}
	pod := podRef{Namespace: "vms", Name: "launcher-a", UID: "u1"}
	args := &skel.CmdArgs{ContainerID: "sandbox-a", Netns: "/var/run/netns/cni-1"}
	base := map[string]string{
		"iface-id": "vms.blue_vms_launcher-a", "attached-mac": "02:00:00:00:0a:01", "iface-status": "active",
		"nqos-cni/netns": "/var/run/netns/cni-1", "nqos-cni/ifname": "pod1", "nqos-cni/pod": "vms/launcher-a",
		"nqos-cni/sandbox": "sandbox-a",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for bk, bv := range base {
			m[bk] = bv
		}
		return m
	}
	for _, tc := range []struct {
		name, uid string
		want      map[string]string
	}{
		{name: "pod UID sets iface-id-ver", uid: "7bda62b4-72fd-4e90-b11f-15e0b389d982",
			want: with("iface-id-ver", "7bda62b4-72fd-4e90-b11f-15e0b389d982")},
		{name: "no UID, no iface-id-ver", uid: "", want: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt := port{Attachment: Attachment{Interface: "pod1"}, mac: mac, lsp: "vms.blue_vms_launcher-a", podUID: tc.uid}
			if diff := cmp.Diff(tc.want, portIDs(pt, pod, args)); diff != "" {
				t.Errorf("portIDs (-want +got):\n%s", diff)
			}
		})
	}
}
