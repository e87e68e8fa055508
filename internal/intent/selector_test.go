package intent

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// selectorView explains testdata/selectors/set.yaml with extra appended.
func selectorView(t *testing.T, extra string) *View {
	t.Helper()
	text, err := os.ReadFile("testdata/selectors/set.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return explainObjects(t, readText(t, string(text)+extra), []string{"node1", "node2"}, []Family{V4})
}

// probeLines renders a VM's probes as "dst proto/port dscp rule dstVM".
func probeLines(v *View, vm string) []string {
	var out []string
	for _, p := range v.Probes {
		if p.VM != vm {
			continue
		}
		dscp, rule := "-", "-"
		if p.Intent.DSCP != nil {
			dscp = fmt.Sprint(*p.Intent.DSCP)
		}
		if p.Intent.Rule != nil {
			rule = *p.Intent.Rule
		}
		out = append(out, fmt.Sprintf("%s %s/%d %s %s %s", p.Dst, p.Protocol, p.Port, dscp, rule, p.DstVM))
	}
	return out
}

// TestSelectorDestinations: a podSelector and a namespaceSelector
// destination give a class to each selected VM (never the sender's own
// address), with the winning rule the compiled rows give.
func TestSelectorDestinations(t *testing.T) {
	v := selectorView(t, "")
	want := map[string][]string{
		"apps/web-1": {
			"10.30.0.1 udp/5201 - - ",
			"10.30.0.21 udp/5201 26 apps/web-to-db#0 apps/db-1",
		},
		// db-1 is selected by to-team-a as a source; its own address is
		// no destination, web-1's is (namespaceSelector team=a).
		"apps/db-1": {
			"10.30.0.1 udp/5201 - - ",
			"10.30.0.11 udp/5201 10 apps/to-team-a#0 apps/web-1",
		},
	}
	for vm, w := range want {
		if got := probeLines(v, vm); !slices.Equal(got, w) {
			t.Errorf("%s:\n got %q\nwant %q", vm, got, w)
		}
	}
	// to-team-a also selects db-1 for web-1, but web-to-db wins there.
	if len(v.Shadowed) != 0 {
		t.Errorf("shadowed %+v, want none", v.Shadowed)
	}
}

// TestSelectorDestinationShadowed: a higher-priority rule with no
// classifier covers a selector rule, which is then shadowed, and wins
// the selected VM's class.
func TestSelectorDestinationShadowed(t *testing.T) {
	v := selectorView(t, `---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: {name: web-all, namespace: apps}
spec:
  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector: {namespaceSelector: {}, networkSelector: {matchLabels: {}}}
  podSelector: {matchLabels: {app: web}}
  priority: 60
  egress:
  - dscp: 46
`)
	got := probeLines(v, "apps/web-1")
	want := []string{"10.30.0.1 udp/5201 46 apps/web-all#0 ", "10.30.0.21 udp/5201 46 apps/web-all#0 apps/db-1"}
	if !slices.Equal(got, want) {
		t.Errorf("web-1:\n got %q\nwant %q", got, want)
	}
	var sh []string
	for _, s := range v.Shadowed {
		sh = append(sh, s.VM+" "+s.Rule+" by "+s.By)
	}
	wantSh := []string{"apps/web-1 apps/to-team-a#0 by apps/web-all#0", "apps/web-1 apps/web-to-db#0 by apps/web-all#0"}
	if !slices.Equal(sh, wantSh) {
		t.Errorf("shadowed %q, want %q", sh, wantSh)
	}
	for _, p := range v.Probes {
		if strings.Contains(p.Why, "selected by") && p.DstVM == "" {
			t.Errorf("%s -> %s: selected destination without its VM", p.VM, p.Dst)
		}
	}
}
