package lifeprobe

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SeededLegacy names the legacy rows seeded before an upgrade (package harness/localnetenv's SeedLegacy).
type SeededLegacy struct {
	AddressSet string   `json:"addressSet"`
	QoSUUIDs   []string `json:"qosUUIDs"` // in rule order
	Matches    []string `json:"matches"`
}

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
