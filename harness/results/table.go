package results

// Table is a table of figures a scenario computed from its measurements
// (the tc HTB lab beside NetworkQoS, what the fabric delivered), shown in
// the report as it is: the cells are already formatted.
type Table struct {
	Title   string     `json:"title"`
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	Notes   []string   `json:"notes,omitempty"`
}
