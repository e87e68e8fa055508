package ovnnb_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// compileOne compiles one NetworkQoS ns/name with one ipBlock rule and a
// 0..2-index rule list on the localnet network net, as the controller
// would; ok is false when the compiler refuses it (then nothing to check).
func compileOne(net, ns, name string) (qos.Result, bool) {
	conf, err := json.Marshal(map[string]string{"cniVersion": "1.0.0", "name": net, "type": "ovn-k8s-cni-overlay",
		"topology": "localnet", "netAttachDefName": ns + "/nad"})
	if err != nil {
		return qos.Result{}, false
	}
	nad := &nadv1.NetworkAttachmentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nad", Labels: map[string]string{"qos": "on"}},
		Spec: nadv1.Spec{Config: string(conf)}}
	nq := &v1alpha1.NetworkQoS{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	nq.Spec.Priority = 5
	nq.Spec.NetworkSelectors = v1alpha1.NetworkSelectors{{NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
		NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
			NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"qos": "on"}}}}}
	nq.Spec.Egress = []v1alpha1.Rule{{DSCP: 1}, {DSCP: 2, Classifier: &v1alpha1.Classifier{To: []v1alpha1.Destination{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}}}}}
	r := qos.CompileObject(nq, qos.NewSnapshot(qos.Input{NADs: []*nadv1.NetworkAttachmentDefinition{nad}}), "")
	return r, r.Err == nil && len(r.QoS) == 2 && len(r.PortGroups) == 1
}

// ovnkubeIDs are the external_ids OVN-Kubernetes's NetworkQoS writes on
// rule's QoS row of ns/name on network net ("" = the default network).
func ovnkubeIDs(net, ns, name, rule string) map[string]string {
	ctrl := "default-network-controller"
	if net != "" {
		ctrl = qos.OVNKubeControllerName(net)
	}
	ext := map[string]string{qos.OwnerControllerKey: ctrl, qos.OwnerTypeKey: qos.OwnerType, qos.ObjectNameKey: ns + ":" + name,
		qos.RuleIndexKey: rule, qos.PrimaryIDKey: ctrl + ":" + qos.OwnerType + ":" + ns + ":" + name + ":" + rule}
	if net != "" {
		ext[qos.NetworkKey] = net
	}
	return ext
}

// FuzzOwnershipKey: for any network name and any valid object names,
// the compiler's rows carry nqos's key (ClassifyOwner says OwnerNQOS,
// k8s.ovn.org/name round-trips to the object), and no row OVN-Kubernetes
// writes, for any network and object, is nqos's or shares an id or a
// hashed name with nqos's rows.
func FuzzOwnershipKey(f *testing.F) {
	f.Add("tenant-blue", "ns1", "gold", "tenant-blue", "ns1", "gold")
	f.Add("a-nqos", "ns", "x", "a", "ns", "x")
	f.Add("x:NetworkQoS:ns", "a", "b", "x", "ns", "a")
	f.Add("cluster_udn_foo-bar", "n", "q", "", "n", "q")
	f.Fuzz(func(t *testing.T, net, ns, name, otherNet, otherNS, otherName string) {
		if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 || net == "" {
			return
		}
		r, ok := compileOne(net, ns, name)
		if !ok {
			return
		}
		key := ovnnb.Key{Namespace: ns, Name: name}
		ids := map[string]bool{}
		names := map[string]bool{r.PortGroups[0].Name: true}
		for _, ext := range []map[string]string{r.PortGroups[0].ExternalIDs, r.QoS[0].ExternalIDs, r.QoS[1].ExternalIDs} {
			if got := ovnnb.ClassifyOwner(ext); got != ovnnb.OwnerNQOS || ovnnb.IsForeignNetworkQoS(ext) {
				t.Fatalf("compiled row %v classified %d", ext, got)
			}
			if k, ok := ovnnb.KeyFromOwnerName(ext[qos.ObjectNameKey]); !ok || k != key {
				t.Fatalf("k8s.ovn.org/name %q does not round-trip to %v", ext[qos.ObjectNameKey], key)
			}
			ids[ext[qos.PrimaryIDKey]] = true
		}
		for _, theirNS := range []string{ns, otherNS} {
			for _, theirName := range []string{name, otherName} {
				for _, theirNet := range []string{net, otherNet, ""} {
					for _, rule := range []string{"0", "1", "src"} {
						ext := ovnkubeIDs(theirNet, theirNS, theirName, rule)
						if ovnnb.IsOwned(ext) {
							t.Fatalf("OVN-Kubernetes's row %v classified as nqos's", ext)
						}
						id := ext[qos.PrimaryIDKey]
						if ids[id] || names[hashName(id)] || names[hashName(id+":0:v4")] {
							t.Fatalf("OVN-Kubernetes's id %q meets nqos's ids %v or names %v", id, ids, names)
						}
					}
				}
			}
		}
		// An nqos row with any one key field changed is not nqos's.
		for _, k := range []string{qos.OwnerControllerKey, qos.NetworkKey, qos.PrimaryIDKey, qos.OwnerTypeKey} {
			ext := maps.Clone(r.QoS[0].ExternalIDs)
			ext[k] = strings.Replace(ext[k], "nqos", "network", 1) + fmt.Sprint(len(k))
			if ovnnb.IsOwned(ext) {
				t.Fatalf("row with %s=%q still nqos's: %v", k, ext[k], ext)
			}
		}
	})
}

// TestOwnershipKeyFixtureCompiles: FuzzOwnershipKey's seeds reach its
// checks (compileOne accepts them), so the fuzz target cannot pass by
// skipping everything.
func TestOwnershipKeyFixtureCompiles(t *testing.T) {
	for _, net := range []string{"tenant-blue", "a-nqos", "x:NetworkQoS:ns", "cluster_udn_foo-bar"} {
		if _, ok := compileOne(net, "ns1", "gold"); !ok {
			t.Errorf("compileOne(%q) refused", net)
		}
	}
}
