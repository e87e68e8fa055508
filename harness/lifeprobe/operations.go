package lifeprobe

import (
	"time"

	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"
)

// LauncherRestart is what a restartLauncher step measured. Durations
// count from the start of the restart.
type LauncherRestart struct {
	VM     VM     `json:"vm"`
	OldLSP string `json:"oldLSP"`
	NewLSP string `json:"newLSP"`
	// Start is when the restart began.
	Start time.Time `json:"start"`
	// MembersBefore and MembersAfter are the object's port-group members.
	MembersBefore []string `json:"membersBefore"`
	MembersAfter  []string `json:"membersAfter"`
	// Restart is how long the launcher restart took (new LSP up).
	Restart       time.Duration `json:"restartNs"`
	NewLSPInNB    time.Duration `json:"newLSPInNBNs"`
	NewInGroup    time.Duration `json:"newInGroupNs"`
	OldOutOfGroup time.Duration `json:"oldOutOfGroupNs"`
	Out           Direction     `json:"out"`
	// Marking counts the guest's packets to the peer on the uplink from
	// the start of the restart until the probe stopped.
	Marking marks.Count `json:"marking"`
}

// Outcome is the launcher restart as a lifecycle step's result.
func (r LauncherRestart) Outcome() Outcome {
	return probed(r.Marking, map[string]Direction{Out: r.Out}, []results.Measure{
		Measured("launcher restart (new LSP up)", r.Restart),
		Measured("new LSP in its port group", r.NewInGroup),
		Measured("old LSP out of its port group", r.OldOutOfGroup),
		Measured("longest gap guest → peer", r.Out.LongestGap),
		Counted("probe packets unmarked", r.Marking.Unmarked, "packets"),
		Counted("probe datagrams lost guest → peer", r.Out.Lost, "datagrams"),
	}, r)
}

// GuestIPChange is what a guestIP step measured.
type GuestIPChange struct {
	VM            VM       `json:"vm"`
	OldIP         string   `json:"oldIP"`
	NewIP         string   `json:"newIP"`
	MembersBefore []string `json:"membersBefore"`
	MembersAfter  []string `json:"membersAfter"`
	// Before counts the packets from the old address, After those from
	// the new one, on the uplink.
	Before    marks.Count `json:"before"`
	After     marks.Count `json:"after"`
	OutBefore Direction   `json:"outBefore"`
	OutAfter  Direction   `json:"outAfter"`
}

// Outcome is the guest IP change as a lifecycle step's result: the
// packets of both addresses count.
func (r GuestIPChange) Outcome() Outcome {
	both := marks.Count{Packets: r.Before.Packets + r.After.Packets, Unmarked: r.Before.Unmarked + r.After.Unmarked}
	out := Sum(r.OutBefore, r.OutAfter)
	return probed(both, map[string]Direction{Out: out}, []results.Measure{
		Counted("probe packets from the old address", r.Before.Packets, "packets"),
		Counted("probe packets from the new address", r.After.Packets, "packets"),
		Counted("probe packets unmarked", both.Unmarked, "packets"),
		Counted("probe datagrams lost guest → peer", out.Lost, "datagrams"),
	}, r)
}

// Stream is what a marked probe stream measured over its whole life.
type Stream struct {
	Name     string `json:"name"`
	Sent     int    `json:"sent"`
	Received int    `json:"received"`
	Lost     int    `json:"lost"`
	// LongestReceiveGap is the receiver's longest time between datagrams.
	LongestReceiveGap time.Duration `json:"longestReceiveGapNs"`
	// Marks is the uplink view from the first marked packet to the end.
	Marks marks.Count `json:"marks"`
}

// Outcome is an operation under the stream as a lifecycle step's
// result: m's packets and gap judged, the whole stream's loss.
func (s Stream) Outcome(m marks.Count, measures []results.Measure, detail any) Outcome {
	o := probed(m, map[string]Direction{Out: {Sent: s.Sent, Lost: s.Lost}}, measures, detail)
	o.Gap = m.Gap
	return o
}

// DaemonRestart is what a daemon restart did to the traffic.
type DaemonRestart struct {
	Node      string    `json:"node"`
	Daemon    string    `json:"daemon"`
	Mode      string    `json:"mode"`
	RestartAt time.Time `json:"restartAt"`
	// Restart is how long the restart took (stop + start).
	Restart time.Duration `json:"restartNs"`
	// Recovered is from the restart to the first packet of a steady run
	// of marked packets.
	Recovered time.Duration `json:"recoveredNs"`
	// Marks covers the restart to the end of the steady window: its Gap
	// (longest time without a marked packet) is the measured outage.
	Marks marks.Count `json:"marks"`
	// Baseline is the same analysis of the window before the restart.
	Baseline marks.Count `json:"baseline"`
	// After is the steady window after recovery.
	After marks.Count `json:"after"`
	// PolicedBefore and PolicedAfter are the policed flow's delivered
	// rates (bit/s at the uplink) before the restart and after recovery.
	PolicedBefore float64 `json:"policedBeforeBps,omitempty"`
	PolicedAfter  float64 `json:"policedAfterBps,omitempty"`
}

// Outcome is the daemon restart as a lifecycle step's result, with the
// whole stream's loss.
func (r DaemonRestart) Outcome(s Stream) Outcome {
	return s.Outcome(r.Marks, []results.Measure{
		Measured("restart (stop + start)", r.Restart),
		Measured("restart → steady marking again", r.Recovered),
		Measured("marking gap (longest time without a marked packet)", r.Marks.Gap),
		Counted("probe packets unmarked around the restart", r.Marks.Unmarked, "packets"),
		Counted("probe datagrams lost over the whole stream", s.Lost, "datagrams"),
	}, map[string]any{"restart": r, "stream": s})
}

// ControllerRestart is what one controller process restart did and
// measured.
type ControllerRestart struct {
	Mode    string `json:"mode"`
	AfterTx int    `json:"afterTx"`
	OldPid  int    `json:"oldPid"`
	NewPid  int    `json:"newPid"`
	// TxBeforeStop is how many NB transactions the monitor had seen
	// since the burst started when the stop signal was sent (== AfterTx
	// when the signal went out from the monitor's goroutine).
	TxBeforeStop int `json:"txBeforeStop"`
	// TxAfterSignal are the old process's transactions the monitor
	// received after the signal: committed before the signal but still
	// queued towards the monitor, or in flight at the server when the
	// process died. The restart point is "right after the monitor saw
	// the AfterTx-th transaction", which on a loaded machine can be a
	// few transactions after the controller committed it.
	TxAfterSignal int `json:"txAfterSignal"`
	// TxWhileDown counts transactions between the old process's exit
	// and the new one's start (must be 0: nobody else writes).
	TxWhileDown int       `json:"txWhileDown"`
	StopAt      time.Time `json:"stopAt"`
	// Down is from the stop signal to the new process's start; Sync from
	// its start to its synced log line.
	Down time.Duration `json:"downNs"`
	Sync time.Duration `json:"syncNs"`
}

// Ready is when the restarted process logged that it was synced.
func (r ControllerRestart) Ready() time.Time { return r.StopAt.Add(r.Down + r.Sync) }
