package cni

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNetworks(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        []string // "<nad> <interface> <mac>"
		wantErr     string
	}{
		{name: "empty", value: "  ", want: nil},
		{name: "short form, default namespace and interfaces", value: "a, other/b",
			want: []string{"vms/a net1 ", "other/b net2 "}},
		{name: "short form with interface", value: "other/b@pod7",
			want: []string{"other/b pod7 "}},
		{name: "JSON as kubevirt writes it",
			value: `[{"name":"blue","namespace":"vms","mac":"02:00:00:00:00:01","interface":"pod1"},{"name":"red","namespace":"net","mac":"02:00:00:00:00:02","interface":"pod2","ips":["10.0.0.1/24"]}]`,
			want:  []string{"vms/blue pod1 02:00:00:00:00:01", "net/red pod2 02:00:00:00:00:02"}},
		{name: "JSON without namespace or interface", value: `[{"name":"blue"}]`,
			want: []string{"vms/blue net1 "}},
		{name: "bad JSON", value: `[{"name":}]`, wantErr: "k8s.v1.cni.cncf.io/networks: JSON list"},
		{name: "no name", value: `[{"namespace":"x"}]`, wantErr: `entry 1 (x/): name "": want a NAD name`},
		{name: "empty short entry", value: "a,,b", wantErr: `entry 2 (vms/): name ""`},
		{name: "bad MAC", value: `[{"name":"a"},{"name":"b","mac":"zz"}]`, wantErr: "entry 2 (vms/b): mac:"},
		{name: "multicast MAC", value: `[{"name":"b","mac":"01:00:5e:00:00:01"}]`, wantErr: "want a unicast Ethernet address"},
		{name: "long interface", value: "a@abcdefghijklmnop", wantErr: `entry 1 (vms/a): interface "abcdefghijklmnop"`},
		{name: "dotted interface", value: "a@eth0.1", wantErr: `interface "eth0.1"`},
		{name: "duplicate interface", value: "a@pod1, b@pod1", wantErr: `entry 2 (vms/b): interface "pod1" already used by entry 1`},
		{name: "runtime's interface", value: "a@eth0", wantErr: `entry 1 (vms/a): interface "eth0" is the runtime's own interface`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			atts, err := ParseNetworks("vms", tc.value, "eth0")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseNetworks(%q) error = %v, want one containing %q", tc.value, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range atts {
				mac := ""
				if a.MAC != nil {
					mac = a.MAC.String()
				}
				got = append(got, a.NAD()+" "+a.Interface+" "+mac)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseNetworks(%q) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

func TestParsePodArgs(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    podRef
		wantErr bool
	}{
		{args: "IgnoreUnknown=1;K8S_POD_NAMESPACE=vms;K8S_POD_NAME=vm-a;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u1",
			want: podRef{Namespace: "vms", Name: "vm-a", UID: "u1"}},
		{args: "IgnoreUnknown=1;K8S_POD_NAMESPACE=vms", wantErr: true},
		{args: "", wantErr: true},
	} {
		got, err := parsePodArgs(tc.args)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parsePodArgs(%q) = %+v, %v; want %+v, error %v", tc.args, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseConf(t *testing.T) {
	c, err := parseConf([]byte(`{"cniVersion":"1.0.0","name":"nqos-bridge","type":"nqos-cni","kubeconfig":"/k",
		"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[{"address":"10.244.1.5/24","interface":0}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.OVSDB != DefaultOVSDB || c.Bridge != DefaultBridge || c.Vsctl != DefaultVsctl || c.Kubeconfig != "/k" {
		t.Errorf("defaults: %+v", c)
	}
	r, err := prevResult(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Interfaces) != 1 || r.Interfaces[0].Name != "eth0" || len(r.IPs) != 1 {
		t.Errorf("prevResult not passed through: %+v", r)
	}
	if _, err := parseConf([]byte(`{"cniVersion":"1.0.0","name":"n","type":"nqos-cni"}`)); err == nil || !strings.Contains(err.Error(), "no kubeconfig") {
		t.Errorf("config without kubeconfig: error %v", err)
	}
}
