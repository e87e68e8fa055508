package qos

import "testing"

// TestRowLines: order and member order do not matter, content does, and
// a repeated row counts twice.
func TestRowLines(t *testing.T) {
	a := Desired{
		PortGroups:  []PortGroup{{Name: "pg1", Ports: []string{"b", "a"}}},
		AddressSets: []AddressSet{{Name: "as1", Addresses: []string{"10.0.0.2", "10.0.0.1"}}},
		QoS:         []QoSRow{{Priority: 10600, Match: "m1"}, {Priority: 10400, Match: "m2"}},
	}
	b := Desired{
		PortGroups:  []PortGroup{{Name: "pg1", Ports: []string{"a", "b"}}},
		AddressSets: []AddressSet{{Name: "as1", Addresses: []string{"10.0.0.1", "10.0.0.2"}}},
		QoS:         []QoSRow{{Priority: 10400, Match: "m2"}, {Priority: 10600, Match: "m1"}},
	}
	if !equalLines(a.RowLines(), b.RowLines()) {
		t.Fatalf("same rows in another order differ:\n%v\n%v", a.RowLines(), b.RowLines())
	}
	b.QoS[0].Match = "m3"
	if equalLines(a.RowLines(), b.RowLines()) {
		t.Fatal("a changed match compares equal")
	}
	c := Desired{QoS: []QoSRow{{Match: "x"}, {Match: "x"}}}
	for line, n := range c.RowLines() {
		if n != 2 {
			t.Fatalf("%s counted %d, want 2", line, n)
		}
	}
}

func equalLines(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
