package lifeprobe

import "time"

// Row change operations of a Transaction.
const (
	OpInsert = "insert"
	OpModify = "modify"
	OpDelete = "delete"
)

// RowChange is one row a committed Northbound transaction touched.
type RowChange struct {
	Table string `json:"table"`
	UUID  string `json:"uuid"`
	Op    string `json:"op"`
	// Name is the name column (Port_Group, Address_Set).
	Name string `json:"name,omitempty"`
	// Match is the QoS match after the change (before it, on delete);
	// OldMatch is set when a modify changed it.
	Match    string `json:"match,omitempty"`
	OldMatch string `json:"oldMatch,omitempty"`
	// Ports is how many ports a Port_Group row holds after the change.
	Ports int `json:"ports,omitempty"`
}

// Transaction is one update notification of the monitor: ovsdb-server
// sends exactly one per committed transaction touching the monitored
// tables. Seq counts from 1; the initial contents are not a transaction.
type Transaction struct {
	Seq     int         `json:"seq"`
	At      time.Time   `json:"at"`
	Changes []RowChange `json:"changes"`
}

// ChangeCounts counts row changes per "<table> <op>" (e.g. "QoS insert").
type ChangeCounts map[string]int

// CountChanges tallies the row changes of txs.
func CountChanges(txs []Transaction) ChangeCounts {
	out := ChangeCounts{}
	for _, tx := range txs {
		for _, c := range tx.Changes {
			out[c.Table+" "+c.Op]++
		}
	}
	return out
}
