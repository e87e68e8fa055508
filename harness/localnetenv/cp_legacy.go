package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/qos"
)

// NBCtl runs ovn-nbctl against the Northbound; *localnet.Testbed
// implements it.
type NBCtl interface {
	NBCtl(ctx context.Context, args ...string) (string, error)
}

// LegacyRule is one rule row as the previous upstream generation wrote
// it: the match is "ip4.src == {$<source set>}" followed by Rest.
type LegacyRule struct {
	Index    int
	Priority int // OVN priority (10000 + priority*10 + index)
	DSCP     int
	// Rest is everything after the source fragment, e.g.
	// " && ip4.dst == 10.20.0.10/32" ("" for no classifier).
	Rest                 string
	RateKbps, BurstKbits uint32
}

// LegacySpec is one NetworkQoS's legacy rows on one network.
type LegacySpec struct {
	Namespace, Name string
	// Network is the OVN-Kubernetes network name (controller
	// "<network>-network-controller"); Switch its logical switch.
	Network, Switch string
	// SourceIPs are the selected pods' IPv4 addresses.
	SourceIPs []string
	Rules     []LegacyRule
}

// SeededLegacy names what SeedLegacy created.
type SeededLegacy struct {
	AddressSet string   `json:"addressSet"`
	QoSUUIDs   []string `json:"qosUUIDs"` // in rule order
	Matches    []string `json:"matches"`
}

// hashForOVN is upstream's HashForOVN: "a" + decimal FNV-64a.
func hashForOVN(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("a%d", h.Sum64())
}

// SeedLegacy writes, in one transaction, the source address set and the
// QoS rows (bound to the switch) exactly as upstream's address-set-based
// controller names and tags them (upstream-networkqos-facts §2.6):
// set <hash of "<ctrl>:NetworkQoS:<ns>:<name>:src:0:v4"> with rule-index
// src, ip-block-index 0, ip-family v4; rows with rule-index <i> and
// k8s.ovn.org/id "<ctrl>:NetworkQoS:<ns>:<name>:<i>" plus the network key.
func SeedLegacy(ctx context.Context, nb NBCtl, s LegacySpec) (SeededLegacy, error) {
	if s.Namespace == "" || s.Name == "" || s.Network == "" || s.Switch == "" || len(s.Rules) == 0 {
		return SeededLegacy{}, fmt.Errorf("legacy rows of %s/%s: namespace, name, network, switch and rules are required", s.Namespace, s.Name)
	}
	ctrl := qos.ControllerName(s.Network)
	owner := []string{
		extArg(qos.OwnerControllerKey, ctrl), extArg(qos.OwnerTypeKey, qos.OwnerType),
		extArg(qos.ObjectNameKey, s.Namespace+":"+s.Name),
	}
	setID := fmt.Sprintf("%s:%s:%s:%s:src:0:v4", ctrl, qos.OwnerType, s.Namespace, s.Name)
	out := SeededLegacy{AddressSet: hashForOVN(setID)}
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
	stdout, err := nb.NBCtl(ctx, args...)
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

// MigrationOrder is the transaction sequence of a legacy migration as
// an independent NB monitor saw it.
type MigrationOrder struct {
	// PortGroupTx is the transaction that inserted the port group.
	PortGroupTx int `json:"portGroupTx"`
	// RewriteTx is, per legacy row, the transaction whose match change
	// dropped the legacy source set.
	RewriteTx []int `json:"rewriteTx"`
	// SetDeleteTx is the transaction that deleted the legacy set.
	SetDeleteTx int `json:"setDeleteTx"`
	// NewMatches are the rows' matches after their rewrite.
	NewMatches []string `json:"newMatches"`
}

// LegacyMigrationOrder finds the migration's transactions and checks the
// order OKEP-6815's upgrade needs: the port group exists no later than
// the rewrite of every row, every row is rewritten in place (never
// deleted), and the legacy set is deleted strictly after the last
// rewrite.
func LegacyMigrationOrder(txs []Transaction, seeded SeededLegacy, portGroup string) (MigrationOrder, error) {
	o := MigrationOrder{RewriteTx: make([]int, len(seeded.QoSUUIDs)), NewMatches: make([]string, len(seeded.QoSUUIDs))}
	var errs []error
	for _, tx := range txs {
		for _, c := range tx.Changes {
			o.note(tx.Seq, c, seeded, portGroup, &errs)
		}
	}
	if o.PortGroupTx == 0 {
		errs = append(errs, fmt.Errorf("port group %s was never inserted", portGroup))
	}
	for i, seq := range o.RewriteTx {
		switch {
		case seq == 0:
			errs = append(errs, fmt.Errorf("legacy row %s was never rewritten", seeded.QoSUUIDs[i]))
		case o.PortGroupTx > seq:
			errs = append(errs, fmt.Errorf("legacy row %s rewritten in transaction %d before its port group was inserted (%d)", seeded.QoSUUIDs[i], seq, o.PortGroupTx))
		}
	}
	last := slices.Max(append([]int{0}, o.RewriteTx...))
	switch {
	case o.SetDeleteTx == 0:
		errs = append(errs, fmt.Errorf("legacy address set %s was never deleted", seeded.AddressSet))
	case o.SetDeleteTx <= last:
		errs = append(errs, fmt.Errorf("legacy address set %s deleted in transaction %d, not after the last rewrite (%d)", seeded.AddressSet, o.SetDeleteTx, last))
	}
	return o, errors.Join(errs...)
}

// note records one row change of transaction seq.
func (o *MigrationOrder) note(seq int, c RowChange, seeded SeededLegacy, portGroup string, errs *[]error) {
	legacyRef := "$" + seeded.AddressSet
	switch c.Table {
	case "Port_Group":
		if c.Op == OpInsert && c.Name == portGroup && o.PortGroupTx == 0 {
			o.PortGroupTx = seq
		}
	case "Address_Set":
		if c.Op == OpDelete && c.Name == seeded.AddressSet {
			o.SetDeleteTx = seq
		}
	case "QoS":
		i := slices.Index(seeded.QoSUUIDs, c.UUID)
		if i < 0 {
			return
		}
		if c.Op == OpDelete {
			*errs = append(*errs, fmt.Errorf("legacy row %s deleted in transaction %d instead of rewritten", c.UUID, seq))
			return
		}
		if c.Op == OpModify && o.RewriteTx[i] == 0 && strings.Contains(c.OldMatch, legacyRef) && !strings.Contains(c.Match, legacyRef) {
			o.RewriteTx[i], o.NewMatches[i] = seq, c.Match
		}
	}
}
