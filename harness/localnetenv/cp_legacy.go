package localnetenv

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/topo/localnet"
)

// legacyQoSRule is one rule row as the previous upstream generation wrote
// it: the match is "ip4.src == {$<source set>}" followed by Rest.
type legacyQoSRule struct {
	Index    int
	Priority int // OVN priority (10000 + priority*10 + index)
	DSCP     int
	// Rest is everything after the source fragment, e.g.
	// " && ip4.dst == 10.20.0.10/32" ("" for no classifier).
	Rest                 string
	RateKbps, BurstKbits uint32
}

// legacySeed is one NetworkQoS's legacy rows on one network.
type legacySeed struct {
	Namespace, Name string
	// Network is the OVN-Kubernetes network name (controller
	// "<network>-network-controller"); Switch its logical switch.
	Network, Switch string
	// SourceIPs are the selected pods' IPv4 addresses.
	SourceIPs []string
	Rules     []legacyQoSRule
}

// hashForOVN is upstream's HashForOVN: "a" + decimal FNV-64a.
func hashForOVN(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("a%d", h.Sum64())
}

// seedLegacyRows writes, in one transaction, the source address set and the
// QoS rows (bound to the switch) exactly as upstream's address-set-based
// controller names and tags them (upstream-networkqos-facts §2.6):
// set <hash of "<ctrl>:NetworkQoS:<ns>:<name>:src:0:v4"> with rule-index
// src, ip-block-index 0, ip-family v4; rows with rule-index <i> and
// k8s.ovn.org/id "<ctrl>:NetworkQoS:<ns>:<name>:<i>" plus the network key,
// into the NB of zone z.
func (e *testbedEnv) seedLegacyRows(ctx context.Context, z localnet.Zone, s legacySeed) (lifeprobe.SeededLegacy, error) {
	if s.Namespace == "" || s.Name == "" || s.Network == "" || s.Switch == "" || len(s.Rules) == 0 {
		return lifeprobe.SeededLegacy{}, fmt.Errorf("legacy rows of %s/%s: namespace, name, network, switch and rules are required", s.Namespace, s.Name)
	}
	ctrl := qos.OVNKubeControllerName(s.Network)
	owner := []string{
		extArg(qos.OwnerControllerKey, ctrl), extArg(qos.OwnerTypeKey, qos.OwnerType),
		extArg(qos.ObjectNameKey, s.Namespace+":"+s.Name),
	}
	setID := fmt.Sprintf("%s:%s:%s:%s:src:0:v4", ctrl, qos.OwnerType, s.Namespace, s.Name)
	out := lifeprobe.SeededLegacy{AddressSet: hashForOVN(setID)}
	args := []string{"--", "create", "Address_Set", "name=" + out.AddressSet,
		"addresses=" + quotedList(s.SourceIPs),
		extArg(qos.PrimaryIDKey, setID), extArg(qos.RuleIndexKey, "src"), extArg(qos.IPBlockIndexKey, "0"), extArg(qos.IPFamilyKey, "v4")}
	args = append(args, owner...)
	for _, r := range s.Rules {
		match := "ip4.src == {$" + out.AddressSet + "}" + r.Rest
		out.Matches = append(out.Matches, match)
		ref := fmt.Sprintf("@legacy%d", r.Index)
		args = append(args, "--", "--id="+ref, "create", "QoS", fmt.Sprintf("priority=%d", r.Priority),
			"direction="+qos.DirectionToLport, fmt.Sprintf("match=%q", match), fmt.Sprintf("action:dscp=%d", r.DSCP),
			extArg(qos.RuleIndexKey, fmt.Sprint(r.Index)), extArg(qos.NetworkKey, s.Network),
			extArg(qos.PrimaryIDKey, fmt.Sprintf("%s:%s:%s:%s:%d", ctrl, qos.OwnerType, s.Namespace, s.Name, r.Index)))
		args = append(args, owner...)
		if r.RateKbps > 0 {
			args = append(args, fmt.Sprintf("bandwidth:rate=%d", r.RateKbps))
		}
		if r.BurstKbits > 0 {
			args = append(args, fmt.Sprintf("bandwidth:burst=%d", r.BurstKbits))
		}
		args = append(args, "--", "add", "Logical_Switch", s.Switch, "qos_rules", ref)
	}
	stdout, err := e.tb.ZoneNBCtl(ctx, z, args...)
	if err != nil {
		return out, fmt.Errorf("seed legacy rows of %s/%s: %w", s.Namespace, s.Name, err)
	}
	uuids := strings.Fields(stdout) // one per create: the set, then each row
	if len(uuids) != 1+len(s.Rules) {
		return out, fmt.Errorf("seed legacy rows of %s/%s: ovn-nbctl printed %q, want %d UUIDs", s.Namespace, s.Name, stdout, 1+len(s.Rules))
	}
	out.QoSUUIDs = uuids[1:]
	return out, nil
}

// quotedList spells a set of strings for ovn-nbctl: "a","b".
func quotedList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ",")
}

func extArg(k, v string) string { return fmt.Sprintf("external_ids:%q=%q", k, v) }
