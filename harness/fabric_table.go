package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/internal/bitrate"
	"github.com/nqos/nqos/scenarios"
)

// Published figures of the tc HTB lab this suite reproduces (25 Gbit/s
// bonded uplink, HTB ceiling 23.75 Gbit/s): each stream alone, both
// together, and the background guarantee as reported; the production
// guarantee is 90% of the same base (9 × the background's 10%).
const (
	labCeiling     = 23.75e9
	labAlone       = 20.4e9
	labProdTogethr = 19.5e9
	labBgTogether  = 2.70e9
	labBgGuarantee = 2.16e9
	labPrGuarantee = 9 * labBgGuarantee
)

// LabColumns are the lab table's columns.
var labColumns = []string{"approach", "production alone / ceiling", "background alone / ceiling",
	"production together / its guarantee", "background together / its guarantee", "combined together / ceiling", "note"}

// labFigures are one approach's four rates (bit/s) in the column order.
type labFigures struct {
	prodAlone, bgAlone, prodTogether, bgTogether float64
}

// labRow formats one approach as ratios, each with its rate.
func labRow(approach, note string, f labFigures, ceiling, prodG, bgG float64) []string {
	cell := func(v, of float64) string { return fmt.Sprintf("%.2f (%s)", v/of, bitrate.Format(v)) }
	return []string{approach, cell(f.prodAlone, ceiling), cell(f.bgAlone, ceiling),
		cell(f.prodTogether, prodG), cell(f.bgTogether, bgG), cell(f.prodTogether+f.bgTogether, ceiling), note}
}

// LabTable computes the lab table: the published lab first, then every
// row's measured approach, rates taken from rate (steady delivered bit/s
// by flow name); a row whose flow has no rate is an error.
func LabTable(t *scenarios.LabTable, family string, rate func(flow string) (float64, bool)) (results.Table, error) {
	ceil, prodG, bgG := float64(t.Ceiling), float64(t.Production), float64(t.Background)
	tab := results.Table{Title: "tc HTB lab and NetworkQoS, as ratios of the ceiling (" + family + ")", Columns: labColumns}
	tab.Rows = append(tab.Rows, labRow("published lab (25 Gbit/s bond, HTB ceiling 23.75G)", "guarantees 19.44G / 2.16G",
		labFigures{labAlone, labAlone, labProdTogethr, labBgTogether}, labCeiling, labPrGuarantee, labBgGuarantee))
	for i, r := range t.Rows {
		var v [4]float64
		for j, f := range r.Flows() {
			got, ok := rate(f)
			if !ok {
				return tab, fmt.Errorf("labTable rows[%d] (%s): flow %s has no delivered rate", i, r.Approach, f)
			}
			v[j] = got
		}
		tab.Rows = append(tab.Rows, labRow(r.Approach, r.Note, labFigures{v[0], v[1], v[2], v[3]}, ceil, prodG, bgG))
	}
	tab.Notes = []string{fmt.Sprintf("Testbed: ceiling %s, guarantees production %s and background %s; rates are steady delivered rates at the receiving VM.",
		t.Ceiling, t.Production, t.Background)}
	return tab, nil
}

func (ex *execution) labTable(_ context.Context, _ int, st *scenarios.Step) error {
	for _, fam := range ex.fams {
		tab, err := LabTable(st.LabTable, string(fam), func(f string) (float64, bool) {
			r, ok := ex.fab.delivered[f+"/"+string(fam)]
			return r, ok
		})
		if err != nil {
			return err
		}
		ex.res.Tables = append(ex.res.Tables, tab)
	}
	return nil
}

// deliveredColumns are the delivered table's columns.
var deliveredColumns = []string{"step", "flow", "DSCP on the uplink", "DSCP delivered", "uplink rate", "delivered rate", "loss uplink → destination"}

// DeliveredRow is one measured flow of the delivered table.
func DeliveredRow(step string, up, at results.Flow, deliveredBps float64, upBps float64) []string {
	return []string{step, up.Name + " → " + up.To, dscpCell(up.DSCP), dscpCell(at.DSCP),
		bitrate.Format(upBps), bitrate.Format(deliveredBps),
		fmt.Sprintf("%.1f%% (%d of %d packets)", 100*lossOf(up.Packets, at.Packets), up.Packets-min(up.Packets, at.Packets), up.Packets)}
}

func lossOf(up, at uint64) float64 {
	if up == 0 || at >= up {
		return 0
	}
	return float64(up-at) / float64(up)
}

// dscpCell lists a histogram's DSCP values, most packets first.
func dscpCell(h []results.DSCPCount) string {
	h = slices.Clone(h)
	slices.SortStableFunc(h, func(a, b results.DSCPCount) int { return int(b.Packets) - int(a.Packets) })
	var parts []string
	for _, c := range h {
		parts = append(parts, fmt.Sprintf("%d (%d)", c.DSCP, c.Packets))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// deliveredRow adds a measured flow to the scenario's delivered table.
func (ex *execution) deliveredRow(st *scenarios.Step, up, at results.Flow, rate float64) {
	if ex.fab.table == 0 {
		ex.res.Tables = append(ex.res.Tables, results.Table{Title: "What the fabric delivered: uplink vs destination",
			Columns: deliveredColumns, Notes: []string{"Uplink: the fabric side of the sending node's uplink (before the fabric). Destination: the receiving VM's NIC or the external host's port (past the fabric)."}})
		ex.fab.table = len(ex.res.Tables)
	}
	name := st.Name
	if name == "" {
		name = fmt.Sprintf("line %d", st.Line)
	}
	upRate, _ := verdict.SteadyRate(up.Rate)
	t := &ex.res.Tables[ex.fab.table-1]
	t.Rows = append(t.Rows, DeliveredRow(name, up, at, rate, upRate))
}

func (kindTable) LabTable() stepKind { return stepKind{name: "labTable", run: (*execution).labTable} }
