package lifeprobe

import (
	"time"

	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"
)

// Directions of a lifecycle probe, the keys of Outcome.Lost and Sent.
const (
	Out = "out" // guest to peer
	In  = "in"  // peer to guest
)

// Outcome is what a lifecycle operation's probe measured: the counts
// the harness judges, the figures for the report and the operation's
// own result for results.json.
type Outcome struct {
	// Packets are the guest's probe packets to the peer seen on the
	// uplinks, Unmarked those without the object's DSCP.
	Packets, Unmarked int
	// Lost are the probe datagrams lost per direction (Out, In), Sent
	// those sent (0: not known).
	Lost, Sent map[string]int
	// Gap is the longest time without a marked probe packet on the
	// uplink (0 where the operation does not measure it).
	Gap time.Duration
	// Measures are the figures for the report.
	Measures []results.Measure
	// Detail is the operation's own result, for results.json.
	Detail any
}

// probed is the Outcome of an operation whose probe saw m on the uplinks
// and dirs per direction (Out, In); its Gap is left 0.
func probed(m marks.Count, dirs map[string]Direction, measures []results.Measure, detail any) Outcome {
	o := Outcome{Packets: m.Packets, Unmarked: m.Unmarked, Lost: map[string]int{}, Sent: map[string]int{}, Measures: measures, Detail: detail}
	for k, d := range dirs {
		o.Lost[k], o.Sent[k] = d.Lost, d.Sent
	}
	return o
}

// Measured is a duration figure of the report.
func Measured(name string, d time.Duration) results.Measure {
	return results.Measure{Name: name, Duration: d}
}

// Counted is a count figure of the report.
func Counted(name string, n int, unit string) results.Measure {
	return results.Measure{Name: name, Count: n, Unit: unit}
}
