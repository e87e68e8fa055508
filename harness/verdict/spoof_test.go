package verdict

import (
	"slices"
	"testing"
)

func TestForeignMACFrames(t *testing.T) {
	s := Spoofing{As: "prod-1", DSCP: 10, AsDSCP: 46}
	for _, tc := range []struct {
		name string
		f    SpoofFlow
		pass bool
	}{
		{"all dropped", SpoofFlow{Sent: 100}, true},
		{"let through in the spoofer's class", SpoofFlow{Sent: 100, Seen: 40, DSCP: map[int]uint64{10: 40}}, true},
		{"one in the victim's class", SpoofFlow{Sent: 100, Seen: 40, DSCP: map[int]uint64{10: 39, 46: 1}}, false},
		{"unmarked", SpoofFlow{Sent: 100, Seen: 5, DSCP: map[int]uint64{0: 5}}, false},
		{"nothing sent", SpoofFlow{}, false},
	} {
		if v := ForeignMACFrames(tc.f, s); v.Pass != tc.pass || v.Property != ForeignMAC || v.Subject != SpoofForgedMAC {
			t.Errorf("%s: %+v, want pass %v", tc.name, v, tc.pass)
		}
	}
}

func TestSpoofMismatches(t *testing.T) {
	s := Spoofing{As: "prod-1", DSCP: 10, AsDSCP: 46}
	passing := map[string]SpoofFlow{
		SpoofOwn:       {Name: SpoofOwn, Sent: 30, Seen: 20, DSCP: map[int]uint64{10: 20}},
		SpoofForgedIP:  {Name: SpoofForgedIP, Sent: 30, Seen: 20, DSCP: map[int]uint64{10: 20}},
		SpoofForgedMAC: {Name: SpoofForgedMAC, Sent: 30},
		SpoofControl:   {Name: SpoofControl, Sent: 3, Seen: 3, DSCP: map[int]uint64{46: 3}},
	}
	bound := []Verdict{{Property: PolicingBound, Pass: true}}
	props := func(flows map[string]SpoofFlow, capture []Verdict) []Property {
		var out []Property
		for _, m := range SpoofMismatches(s, func(n string) SpoofFlow { return flows[n] }, capture) {
			out = append(out, m.Property)
		}
		return out
	}
	with := func(name string, f SpoofFlow) map[string]SpoofFlow {
		out := map[string]SpoofFlow{}
		for k, v := range passing {
			out[k] = v
		}
		out[name] = f
		return out
	}
	for _, c := range []struct {
		name    string
		flows   map[string]SpoofFlow
		capture []Verdict
		want    []Property
	}{
		{"keeps its class", passing, bound, nil},
		{"forged IP in the victim's class", with(SpoofForgedIP, SpoofFlow{Sent: 30, Seen: 20, DSCP: map[int]uint64{46: 20}}), bound, []Property{DSCP}},
		{"control frames lost", with(SpoofControl, SpoofFlow{Sent: 3, Seen: 2, DSCP: map[int]uint64{46: 2}}), bound, []Property{DSCP}},
		{"forged MAC left the node", with(SpoofForgedMAC, SpoofFlow{Sent: 30, Seen: 1, DSCP: map[int]uint64{10: 1}}), bound, []Property{PortSecurity}},
		{"bound broken", passing, []Verdict{{Property: PolicingBound, Message: "FAIL"}}, []Property{PolicingBound}},
		{"bound not judged", passing, nil, []Property{PolicingBound}},
	} {
		if got := props(c.flows, c.capture); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
