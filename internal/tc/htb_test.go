package tc

import (
	"net/netip"
	"strings"
	"testing"
)

// lab is the tc HTB lab's shape at 50 Mbit/s: production 90% guaranteed,
// background 10% selected by destination, both may borrow the ceiling.
func lab() HTB {
	return HTB{Ceil: 50e6, Classes: []Class{
		{Name: "production", Rate: 45e6, Default: true},
		{Name: "background", Rate: 5e6, Dst: []netip.Prefix{netip.MustParsePrefix("10.40.0.22/32")}},
	}}
}

func TestValidate(t *testing.T) {
	bad := map[string]func(*HTB){
		"ceil: must be above 0":         func(h *HTB) { h.Ceil = 0 },
		"2 default classes":             func(h *HTB) { h.Classes[1].Default = true },
		"0 default classes":             func(h *HTB) { h.Classes[0].Default = false; h.Classes[0].DSCP = []int{46} },
		"add up to 55000000":            func(h *HTB) { h.Classes[1].Rate = 10e6 },
		"selects nothing":               func(h *HTB) { h.Classes[1].Dst = nil },
		"dscp 64: must be 0-63":         func(h *HTB) { h.Classes[1].DSCP = []int{64} },
		"prio 8: must be 0-7":           func(h *HTB) { h.Classes[0].Prio = 8 },
		"above the root ceiling":        func(h *HTB) { h.Classes[0].Ceil = 60e6 },
		"duplicate name \"production\"": func(h *HTB) { h.Classes[1].Name = "production" },
		"rate: must be above 0":         func(h *HTB) { h.Classes[1].Rate = 0 },
	}
	for want, mutate := range bad {
		h := lab()
		mutate(&h)
		err := h.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if err := lab().Validate(); err != nil {
		t.Errorf("lab: %v", err)
	}
	if id := lab().ClassID("background"); id != firstLeaf+1 {
		t.Errorf("ClassID(background) = %#x", id)
	}
}
