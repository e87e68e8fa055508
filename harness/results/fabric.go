package results

// FabricPage is what `nqos-sim verify` shows: per OVN version the fabric
// view (VM × class → DSCP, meter, winning rule), and the classes whose
// outcome differs between versions.
type FabricPage struct {
	Source      string // the manifest set
	Views       []FabricView
	DiffHeader  []string
	Differences [][]string
	// Static: the view comes from the compiler alone (explain): no
	// ovn-trace, wire or agreement columns.
	Static bool
}

// FabricView is one OVN version's fabric view.
type FabricView struct {
	OVNVersion string
	Rows       []FabricRow
	Shadowed   []string
	Failures   []string
	RunReport  string // the scenario report of the run, relative to the page
}

// FabricRow is one VM's class: what the compiled intent, ovn-trace and the
// uplink capture each say.
type FabricRow struct {
	VM, Family, Class          string
	DSCP, Meter, Rule          string
	Trace, Wire, Policed, Note string
	Agree                      bool
	// Sharing says who shares the class's meter on the VM's node.
	Sharing string
}
