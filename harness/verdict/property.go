package verdict

import (
	"fmt"
	"strings"
)

// Property is what a verdict is about. It appears in the machine-readable
// line "FAIL scenario <name>: <property>" and never contains spaces.
type Property string

// Properties of measured flows and probes.
const (
	DSCP                   Property = "dscp"                     // packets with the wrong class (or, for spoof frames, left with it)
	Unmarked               Property = "unmarked"                 // packets carrying a DSCP they must not carry
	PolicingBound          Property = "policing-bound"           // a meter's frames exceeded rate*T + burst
	PolicingFloor          Property = "policing-floor"           // an overloaded policed flow delivered too little or too much
	PolicingFloorAggregate Property = "policing-floor-aggregate" // the flows of one shared meter, together
	MeterAccounting        Property = "meter-accounting"         // sent != seen + dropped by the meter
	Delivery               Property = "delivery"                 // sequence numbers missing or duplicated
	Throughput             Property = "throughput"               // a flow's steady rate outside its expected range
	Traffic                Property = "traffic"                  // the traffic sender failed
	Loss                   Property = "loss"                     // a lifecycle probe lost more datagrams than allowed
	Gap                    Property = "marking-gap"              // a daemon restart left the probe unmarked for too long
	ForeignMAC             Property = "foreign-mac"              // frames with another VM's MAC left with another class
	PortSecurity           Property = "port-security"            // frames with another VM's MAC left the node
	Delay                  Property = "marking-delay"            // a new VM's first marked packet outside its window
	Undelivered            Property = "undelivered"              // a flow expected undelivered resolved its peer or reached the uplink
)

// Properties of the control plane and the NB.
const (
	Conditions Property = "conditions"      // a status condition expectation
	Rows       Property = "nb-rows"         // an NB row expectation (rows, members, no owned rows)
	Audit      Property = "nb-audit"        // an NB invariant broken in some committed state
	ThreeWay   Property = "three-way"       // intent, ovn-trace and capture disagree
	Churn      Property = "churn"           // the churn did not exercise what it must
	Writers    Property = "nb-writers"      // more than one controller wrote the NB at a time
	Migration  Property = "migration-order" // a legacy migration step out of order
	StartFails Property = "start-fails"     // a VM expected not to start started, or for another reason
)

// MigrationOutcome: a VirtualMachineInstanceMigration refused or run
// other than its step expects.
const MigrationOutcome Property = "vm-migration"

// Normal is p with every run of whitespace replaced by "-", as the
// failure line requires.
func (p Property) Normal() Property { return Property(strings.Join(strings.Fields(string(p)), "-")) }

// FailureLine is the machine-readable line of one failed property of a
// scenario: "FAIL scenario <name>: <property>".
func FailureLine(scenario string, p Property) string {
	return fmt.Sprintf("FAIL scenario %s: %s", scenario, p.Normal())
}
