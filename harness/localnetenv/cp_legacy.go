package localnetenv

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// hashForOVN is upstream's HashForOVN: "a" + decimal FNV-64a.
func hashForOVN(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("a%d", h.Sum64())
}

// seedLegacyRows writes m's compiled rows in want into the NB of zone z
// in their legacy form, in one transaction, and returns m's port group.
// Each row keeps its priority, action, bandwidth and classifier; its
// source fragment "inport == @<port group>" becomes
// "ip4.src == {$<source set>}", the set holding legacySource's
// addresses. The set and the rows (bound to the switch) are named and
// tagged exactly as upstream's address-set-based controller does
// (upstream-networkqos-facts §2.6): set <hash of
// "<ctrl>:NetworkQoS:<ns>:<name>:src:0:v4"> with rule-index src,
// ip-block-index 0, ip-family v4; rows with rule-index <i> and
// k8s.ovn.org/id "<ctrl>:NetworkQoS:<ns>:<name>:<i>" plus the network key.
func (e *testbedEnv) seedLegacyRows(ctx context.Context, z localnet.Zone, want qos.Desired, m *scenarios.Manifest) (qos.PortGroup, lifeprobe.SeededLegacy, error) {
	pg, ips, err := e.legacySource(want, m)
	if err != nil {
		return pg, lifeprobe.SeededLegacy{}, err
	}
	// want's rows are in priority order, so one object's in rule order.
	rows := slices.DeleteFunc(slices.Clone(want.QoS), func(r qos.QoSRow) bool { return !ownedBy(r.ExternalIDs, m) })
	if m.Namespace == "" || m.Name == "" || len(rows) == 0 || rows[0].ExternalIDs[qos.NetworkKey] == "" || rows[0].Switch == "" {
		return pg, lifeprobe.SeededLegacy{}, fmt.Errorf("legacy rows of %s/%s: namespace, name, network, switch and rules are required", m.Namespace, m.Name)
	}
	network := rows[0].ExternalIDs[qos.NetworkKey]
	ctrl := qos.OVNKubeControllerName(network)
	owner := []string{
		extArg(qos.OwnerControllerKey, ctrl), extArg(qos.OwnerTypeKey, qos.OwnerType),
		extArg(qos.ObjectNameKey, m.Namespace+":"+m.Name),
	}
	setID := fmt.Sprintf("%s:%s:%s:%s:src:0:v4", ctrl, qos.OwnerType, m.Namespace, m.Name)
	out := lifeprobe.SeededLegacy{AddressSet: hashForOVN(setID)}
	args := []string{"--", "create", "Address_Set", "name=" + out.AddressSet,
		"addresses=" + quotedList(ips),
		extArg(qos.PrimaryIDKey, setID), extArg(qos.RuleIndexKey, "src"), extArg(qos.IPBlockIndexKey, "0"), extArg(qos.IPFamilyKey, "v4")}
	args = append(args, owner...)
	for _, row := range rows {
		rest, ok := strings.CutPrefix(row.Match, "inport == @"+pg.Name)
		if !ok {
			return pg, out, fmt.Errorf("legacy rows of %s: compiled match %q does not start with port group %s", m.Key(), row.Match, pg.Name)
		}
		i, err := strconv.Atoi(row.ExternalIDs[qos.RuleIndexKey])
		if err != nil {
			return pg, out, fmt.Errorf("legacy rows of %s: compiled row %q: rule index: %w", m.Key(), row.Match, err)
		}
		match := "ip4.src == {$" + out.AddressSet + "}" + rest
		out.Matches = append(out.Matches, match)
		ref := fmt.Sprintf("@legacy%d", i)
		args = append(args, "--", "--id="+ref, "create", "QoS", fmt.Sprintf("priority=%d", row.Priority),
			"direction="+qos.DirectionToLport, fmt.Sprintf("match=%q", match), fmt.Sprintf("action:dscp=%d", row.Action.DSCP),
			extArg(qos.RuleIndexKey, fmt.Sprint(i)), extArg(qos.NetworkKey, network),
			extArg(qos.PrimaryIDKey, fmt.Sprintf("%s:%s:%s:%s:%d", ctrl, qos.OwnerType, m.Namespace, m.Name, i)))
		args = append(args, owner...)
		if b := row.Bandwidth; b != nil && b.Rate > 0 {
			args = append(args, fmt.Sprintf("bandwidth:rate=%d", b.Rate))
		}
		if b := row.Bandwidth; b != nil && b.Burst > 0 {
			args = append(args, fmt.Sprintf("bandwidth:burst=%d", b.Burst))
		}
		args = append(args, "--", "add", "Logical_Switch", row.Switch, "qos_rules", ref)
	}
	stdout, err := e.tb.ZoneNBCtl(ctx, z, args...)
	if err != nil {
		return pg, out, fmt.Errorf("seed legacy rows of %s/%s: %w", m.Namespace, m.Name, err)
	}
	uuids := strings.Fields(stdout) // one per create: the set, then each row
	if len(uuids) != 1+len(rows) {
		return pg, out, fmt.Errorf("seed legacy rows of %s/%s: ovn-nbctl printed %q, want %d UUIDs", m.Namespace, m.Name, stdout, 1+len(rows))
	}
	out.QoSUUIDs = uuids[1:]
	return pg, out, nil
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
