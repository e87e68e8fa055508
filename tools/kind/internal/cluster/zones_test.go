package cluster

import (
	"strings"
	"testing"
)

func TestOVNKubeProcs(t *testing.T) {
	ns := []ovnNode{{node: node{name: "cp"}, central: true}, {node: node{name: "w1"}}, {node: node{name: "w2"}}}
	cases := map[Topology]string{
		Central:      "ovnkube master on node cp",
		Interconnect: "ovnkube cluster-manager on node cp|ovnkube controller on node cp|ovnkube controller on node w1|ovnkube controller on node w2",
	}
	for topo, want := range cases {
		var got []string
		for _, p := range ovnkubeProcs(topo, ns, &ns[0]) {
			got = append(got, p.String())
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: processes %v, want %s", topo, got, want)
		}
	}
	cm := ovnkubeProc{node: &ns[0], role: roleClusterManager}
	if cm.writesNB() || cm.pidfile() != "/run/ovn-kubernetes/ovnkube-cluster-manager.pid" {
		t.Errorf("cluster manager: writesNB %t, pidfile %s", cm.writesNB(), cm.pidfile())
	}
}

func TestWithServer(t *testing.T) {
	conf := "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: X\n    server: https://nqos-x-control-plane:6443\n  name: kind\n"
	got, err := withServer(conf, "https://172.18.0.2:6443")
	if err != nil || !strings.Contains(got, "\n    server: https://172.18.0.2:6443\n") || strings.Contains(got, "control-plane:6443") {
		t.Fatalf("withServer = %q, %v", got, err)
	}
	if _, err := withServer("clusters: []\n", "https://x"); err == nil {
		t.Error("a kubeconfig without a server line: no error")
	}
}
