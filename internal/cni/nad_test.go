package cni

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

func nad(namespace, name, config string) *nadv1.NetworkAttachmentDefinition {
	return &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: nadv1.Spec{Config: config}}
}

func TestParseNAD(t *testing.T) {
	const ok = `"type":"ovn-k8s-cni-overlay","topology":"localnet","name":"tenant-blue","netAttachDefName":"vms/blue"`
	for _, tc := range []struct {
		name, config string
		want         Network
		wantErr      string
	}{
		{name: "scenario config", config: `{"cniVersion":"1.0.0","name":"tenant-blue","type":"ovn-k8s-cni-overlay","topology":"localnet","physicalNetworkName":"physnet","vlanID":100,"netAttachDefName":"vms/blue"}`,
			want: Network{Name: "tenant-blue", MTU: 1500, VLANID: 100}},
		{name: "mtu and subnets", config: `{` + ok + `,"mtu":9000,"subnets":"10.0.0.0/24"}`,
			want: Network{Name: "tenant-blue", MTU: 9000}},
		{name: "empty", config: " ", wantErr: "NAD vms/blue: spec.config: empty"},
		{name: "not JSON", config: "{", wantErr: "NAD vms/blue: spec.config: unexpected end"},
		{name: "other plugin", config: `{"type":"bridge","name":"x"}`, wantErr: `NAD vms/blue: spec.config.type: "bridge": want ovn-k8s-cni-overlay`},
		{name: "layer2", config: `{"type":"ovn-k8s-cni-overlay","topology":"layer2","name":"x","netAttachDefName":"vms/blue"}`,
			wantErr: `spec.config.topology: "layer2": want localnet`},
		{name: "no name", config: `{"type":"ovn-k8s-cni-overlay","topology":"localnet","netAttachDefName":"vms/blue"}`,
			wantErr: "spec.config.name: empty"},
		{name: "other NAD's config", config: `{"type":"ovn-k8s-cni-overlay","topology":"localnet","name":"x","netAttachDefName":"vms/red"}`,
			wantErr: `spec.config.netAttachDefName: "vms/red": want "vms/blue"`},
		{name: "tiny mtu", config: `{` + ok + `,"mtu":10}`, wantErr: "spec.config.mtu: 10: want 68 to 65535"},
		{name: "bad vlan", config: `{` + ok + `,"vlanID":5000}`, wantErr: "spec.config.vlanID: 5000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNAD(nad("vms", "blue", tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseNAD error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseNAD = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
