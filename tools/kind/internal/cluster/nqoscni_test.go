package cluster

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestConflistChained(t *testing.T) {
	for _, chained := range [][]string{nil, {pluginEntry()}} {
		var c struct {
			CNIVersion string           `json:"cniVersion"`
			Plugins    []map[string]any `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(conflist("10.244.1.0/24", chained...)), &c); err != nil {
			t.Fatalf("conflist with %v is not JSON: %v", chained, err)
		}
		var types []string
		for _, p := range c.Plugins {
			types = append(types, p["type"].(string))
		}
		want := "bridge portmap"
		if len(chained) > 0 {
			want += " nqos-cni"
			last := c.Plugins[2]
			if last["kubeconfig"] != pluginKubeconfig || last["ovsDB"] != pluginOVSDB {
				t.Errorf("nqos-cni entry %v", last)
			}
		}
		if strings.Join(types, " ") != want || c.CNIVersion != "1.0.0" {
			t.Errorf("conflist plugins %v version %s, want %s 1.0.0", types, c.CNIVersion, want)
		}
	}
}

func TestPluginKubeconfigText(t *testing.T) {
	ca := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	got := pluginKubeconfigText("https://172.18.0.2:6443", []byte(ca), "tok.en")
	for _, want := range []string{
		"server: https://172.18.0.2:6443\n",
		"certificate-authority-data: " + base64.StdEncoding.EncodeToString([]byte(ca)) + "\n",
		"token: tok.en\n", "current-context: nqos\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, got)
		}
	}
}

func TestPluginRBACGrantsGetOnly(t *testing.T) {
	for _, want := range []string{"resources: [pods]\n  verbs: [get]", "resources: [network-attachment-definitions]\n  verbs: [get]", "kind: ServiceAccount"} {
		if !strings.Contains(pluginRBAC, want) {
			t.Errorf("cni/rbac.yaml lacks %q", want)
		}
	}
	if n := strings.Count(pluginRBAC, "verbs:"); n != 2 {
		t.Errorf("cni/rbac.yaml has %d verb lists, want 2 (get pods, get NADs)", n)
	}
}
