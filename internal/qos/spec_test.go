package qos

import (
	"strings"
	"testing"
)

var invalidBase = nadManifest("vms", "net1", "localnet") + `---
apiVersion: v1
kind: Pod
metadata: { name: vm1, namespace: vms, annotations: { k8s.v1.cni.cncf.io/networks: net1 } }
spec: { nodeName: n1, containers: [ { name: c, image: x } ] }
---
apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: { name: backup, namespace: vms }
spec:
  networkSelectors:
  - networkSelectionType: NetworkAttachmentDefinitions
    networkAttachmentDefinitionSelector:
      namespaceSelector: {}
      networkSelector: { matchLabels: { qos: "on" } }
  priority: 7
  egress:
  - dscp: 46
%RULE%
`

// TestInvalidSpec: each invalid input gives an error naming the object and
// the field, Accepted=False/InvalidSpec with the same message, and no rows.
func TestInvalidSpec(t *testing.T) {
	cases := []struct {
		name, rule, want string
	}{
		{"bad CIDR", `  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: 10.20.0.0/33 } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].ipBlock.cidr: invalid CIDR "10.20.0.0/33"`},
		{"CIDR with injection", `  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: "10.0.0.0/8 || 1" } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].ipBlock.cidr: invalid CIDR "10.0.0.0/8 || 1"`},
		{"except outside", `  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: 10.20.0.0/16, except: [ 10.30.0.0/24 ] } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].ipBlock.except[0]: "10.30.0.0/24" is not inside cidr "10.20.0.0/16"`},
		{"except family", `  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: 10.20.0.0/16, except: [ "fd00::/64" ] } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].ipBlock.except[0]: "fd00::/64" is not of the same IP family as cidr "10.20.0.0/16"`},
		{"except wider", `  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: 10.20.0.0/16, except: [ 10.0.0.0/8 ] } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].ipBlock.except[0]: "10.0.0.0/8" is not inside cidr "10.20.0.0/16"`},
		{"dscp high", `  - dscp: 64`, `vms/backup: spec.egress[1].dscp: 64 out of range 0..63`},
		{"dscp negative", `  - dscp: -1`, `vms/backup: spec.egress[1].dscp: -1 out of range 0..63`},
		{"unknown protocol", `  - dscp: 8
    classifier: { ports: [ { protocol: ICMP } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].protocol: unknown protocol "ICMP" (allowed: TCP, UDP, SCTP)`},
		{"lowercase protocol", `  - dscp: 8
    classifier: { ports: [ { protocol: tcp, port: 80 } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].protocol: unknown protocol "tcp" (allowed: TCP, UDP, SCTP)`},
		{"protocol injection", `  - dscp: 8
    classifier: { ports: [ { protocol: "TCP || 1" } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].protocol: unknown protocol "TCP || 1" (allowed: TCP, UDP, SCTP)`},
		{"port without protocol", `  - dscp: 8
    classifier: { ports: [ { port: 80 } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].protocol: required (a port needs a protocol)`},
		{"port zero", `  - dscp: 8
    classifier: { ports: [ { protocol: UDP, port: 0 } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].port: 0 out of range 1..65535`},
		{"port high", `  - dscp: 8
    classifier: { ports: [ { protocol: UDP, port: 70000 } ] }`,
			`vms/backup: spec.egress[1].classifier.ports[0].port: 70000 out of range 1..65535`},
		{"selector and ipBlock", `  - dscp: 8
    classifier: { to: [ { podSelector: {}, ipBlock: { cidr: 10.0.0.0/8 } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0]: podSelector/namespaceSelector and ipBlock are mutually exclusive`},
		{"bad selector", `  - dscp: 8
    classifier: { to: [ { podSelector: { matchExpressions: [ { key: app, operator: Bogus } ] } } ] }`,
			`vms/backup: spec.egress[1].classifier.to[0].podSelector: "Bogus" is not a valid label selector operator`},
		{"too many rules", strings.Repeat("  - dscp: 1\n", 20), `vms/backup: spec.egress: 21 rules, at most 20 allowed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := decodeString(t, strings.Replace(invalidBase, "%RULE%", c.rule, 1))
			rs := CompileAll(in)
			r := rs[0]
			if r.Err == nil || r.Err.Error() != c.want {
				t.Fatalf("error %v\nwant  %s", r.Err, c.want)
			}
			if r.Accepted.Status != "False" || r.Accepted.Reason != ReasonInvalidSpec || r.Accepted.Message != c.want {
				t.Errorf("condition %+v", r.Accepted)
			}
			if len(r.PortGroups)+len(r.AddressSets)+len(r.QoS) != 0 {
				t.Errorf("invalid object produced rows: %+v", r)
			}
		})
	}
}

func TestInvalidSpecTopLevel(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"priority", "priority: 7", "priority: 101", "vms/backup: spec.priority: 101 out of range 0..100"},
		{"selection type", "networkSelectionType: NetworkAttachmentDefinitions", "networkSelectionType: DefaultNetwork",
			`vms/backup: spec.networkSelectors[0].networkSelectionType: unsupported network selection type "DefaultNetwork" (allowed: ClusterUserDefinedNetworks, NetworkAttachmentDefinitions)`},
		{"inconsistent union", "networkSelectionType: NetworkAttachmentDefinitions", "networkSelectionType: ClusterUserDefinedNetworks",
			"vms/backup: spec.networkSelectors[0]: inconsistent selector: networkSelectionType ClusterUserDefinedNetworks needs exactly its own selector member"},
		{"pod selector", "priority: 7", "priority: 7\n  podSelector: { matchLabels: { 'bad key!': x } }", "vms/backup: spec.podSelector: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(strings.Replace(invalidBase, "%RULE%", "", 1), c.from, c.to, 1)
			r := CompileAll(decodeString(t, y))[0]
			if r.Err == nil || !strings.HasPrefix(r.Err.Error(), c.want) {
				t.Fatalf("error %v, want prefix %q", r.Err, c.want)
			}
			if len(r.QoS)+len(r.PortGroups) != 0 {
				t.Errorf("rows for invalid object")
			}
		})
	}
}
