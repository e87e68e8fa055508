package localnet

import (
	"slices"
	"testing"

	"github.com/nqos/nqos/internal/qos"
)

func TestLocalnetSwitches(t *testing.T) {
	nets := []Network{{Network: qos.Network{Switch: "tenant.blue_ovn_localnet_switch"}}}
	for _, tc := range []struct {
		name, out string
		want      []string
		wantErr   bool
	}{
		{name: "ovnkube's default network stays",
			out: `{"headings":["name","external_ids"],"data":[["join",["map",[]]],["nqos-ovk-worker",["map",[["k8s.ovn.org/network","default"]]]]]}`},
		{name: "a localnet switch is left over",
			out:  `{"headings":["name","external_ids"],"data":[["join",["map",[]]],["red_ovn_localnet_switch",["map",[["k8s.ovn.org/topology","localnet"]]]]]}`,
			want: []string{"red_ovn_localnet_switch"}},
		{name: "a network's switch without external_ids",
			out:  `{"headings":["name","external_ids"],"data":[["tenant.blue_ovn_localnet_switch",["map",[]]]]}`,
			want: []string{"tenant.blue_ovn_localnet_switch"}},
		{name: "bad map", out: `{"headings":["name","external_ids"],"data":[["x","oops"]]}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := decodeTable(tc.out, "test")
			if err != nil {
				t.Fatal(err)
			}
			got, err := localnetSwitches(tb, nets)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Errorf("localnetSwitches = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
