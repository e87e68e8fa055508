package intent

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/nqos/nqos/internal/qos"
)

// Winners are the compiled rows that decide one packet: Mark is the row
// whose DSCP it carries, Meter the row whose meter polices it; nil where
// none applies.
type Winners struct {
	Mark, Meter *qos.QoSRow
}

// Index is a compiled desired state prepared for evaluating many
// packets: every match tokenized once, the rows of each switch, and the
// rows each logical switch port can enter through its port groups.
type Index struct {
	env    matchEnv
	rows   []indexedRow
	open   map[string][]int // switch -> rows whose match names no inport port group
	byPort map[string][]int // port -> rows whose inport port group holds it
}

type indexedRow struct {
	row  *qos.QoSRow
	toks []string
	err  error
}

// NewIndex indexes d's QoS rows; d must outlive the index.
func NewIndex(d *qos.Desired) *Index {
	ix := &Index{env: matchEnv{portGroups: map[string][]string{}, addrSets: map[string][]string{}},
		open: map[string][]int{}, byPort: map[string][]int{}}
	for _, pg := range d.PortGroups {
		ix.env.portGroups[pg.Name] = pg.Ports
	}
	for _, as := range d.AddressSets {
		ix.env.addrSets[as.Name] = as.Addresses
	}
	for i := range d.QoS {
		r := &d.QoS[i]
		toks, err := tokenize(r.Match)
		ix.rows = append(ix.rows, indexedRow{row: r, toks: toks, err: err})
		pg := inportGroup(toks)
		if members, ok := ix.env.portGroups[pg]; ok && err == nil {
			for _, p := range members {
				ix.byPort[p] = append(ix.byPort[p], i)
			}
			continue
		}
		ix.open[r.Switch] = append(ix.open[r.Switch], i)
	}
	return ix
}

// inportGroup is the port group a match starts with ("inport == @pg &&
// ..."), which every packet it matches must enter through; "" otherwise.
func inportGroup(toks []string) string {
	if len(toks) >= 3 && toks[0] == "inport" && toks[1] == "==" && len(toks[2]) > 1 && toks[2][0] == '@' &&
		(len(toks) == 3 || toks[3] == "&&") {
		return toks[2][1:]
	}
	return ""
}

// Winners applies OVN's QoS stages to the rows matching p on switch sw:
// with split stages (OVN before 24.09) the DSCP comes from the
// highest-priority matching row and the meter from the highest-priority
// matching row with a bandwidth; with one stage one row decides both.
func (ix *Index) Winners(sw string, p Packet, split bool) (Winners, error) {
	var mark, meter *qos.QoSRow
	consider := func(i int) error {
		ir := ix.rows[i]
		if ir.row.Switch != sw {
			return nil
		}
		if ir.err != nil {
			return fmt.Errorf("QoS row priority %d: match %q: %w", ir.row.Priority, ir.row.Match, ir.err)
		}
		ok, err := evalTokens(ir.row.Match, ir.toks, p, ix.env)
		if err != nil {
			return fmt.Errorf("QoS row priority %d: %w", ir.row.Priority, err)
		}
		if !ok {
			return nil
		}
		if mark == nil || ir.row.Priority > mark.Priority {
			mark = ir.row
		}
		if metered(ir.row) && (meter == nil || ir.row.Priority > meter.Priority) {
			meter = ir.row
		}
		return nil
	}
	for _, list := range [][]int{ix.byPort[p.InPort], ix.open[sw]} {
		for _, i := range list {
			if err := consider(i); err != nil {
				return Winners{}, err
			}
		}
	}
	if !split {
		meter = nil
		if mark != nil && metered(mark) {
			meter = mark
		}
	}
	return Winners{Mark: mark, Meter: meter}, nil
}

func metered(r *qos.QoSRow) bool { return r.Bandwidth != nil && r.Bandwidth.Rate > 0 }

// StageWinners is Winners for one packet on OVN release ovn ("23.03.1"),
// indexing d for it.
func StageWinners(d *qos.Desired, sw string, p Packet, ovn string) (Winners, error) {
	split, err := SplitStages(ovn)
	if err != nil {
		return Winners{}, err
	}
	return NewIndex(d).Winners(sw, p, split)
}

var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)(\.\d+)?\S*$`)

// SplitStages reports whether OVN version v marks and meters in two
// separate stages (before 24.09), where the highest-priority marking row
// and the highest-priority metering row can differ.
func SplitStages(v string) (bool, error) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return false, fmt.Errorf("ovn version %q: not <major>.<minor>[.<patch>]", v)
	}
	major, err := strconv.Atoi(m[1])
	if err != nil {
		return false, fmt.Errorf("ovn version %q: %w", v, err)
	}
	minor, err := strconv.Atoi(m[2])
	if err != nil {
		return false, fmt.Errorf("ovn version %q: %w", v, err)
	}
	return major < 24 || (major == 24 && minor < 9), nil
}
