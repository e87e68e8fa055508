package localnet

import (
	"strings"
	"testing"
)

func TestRouterSpecErrors(t *testing.T) {
	gw := RouterSpec{Name: "gw", Network: "tenant-blue", IPv4: "10.10.0.1/16", IPv6: "fd00:10::1/64",
		SiteIPv4: "10.20.0.1/16", SiteIPv6: "fd00:20::1/64"}
	behind := HostSpec{Name: "backup", Network: "tenant-blue", Router: "gw", IPv4: "10.20.0.5/16", IPv6: "fd00:20::5/64"}
	if _, err := (Spec{RunID: "t9", Routers: []RouterSpec{gw}, Hosts: []HostSpec{behind}}).withDefaults(); err != nil {
		t.Fatalf("valid routed host: %v", err)
	}
	with := func(f func(r *RouterSpec, h *HostSpec)) Spec {
		r, h := gw, behind
		f(&r, &h)
		return Spec{RunID: "t9", Routers: []RouterSpec{r}, Hosts: []HostSpec{h}}
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{with(func(r *RouterSpec, _ *HostSpec) { r.Network = "nope" }), `router gw: network "nope"`},
		{with(func(r *RouterSpec, _ *HostSpec) { r.IPv4 = "fd00::1/64" }), "router gw: IPv4"},
		{with(func(r *RouterSpec, _ *HostSpec) { r.SiteIPv6 = "x" }), "router gw: SiteIPv6"},
		{with(func(_ *RouterSpec, h *HostSpec) { h.Router = "other" }), `router "other" is not in spec.Routers`},
		{with(func(_ *RouterSpec, h *HostSpec) { h.IPv4 = "10.30.0.5/16" }), "not in router gw's site prefix"},
		{with(func(r *RouterSpec, _ *HostSpec) { r.SiteIPv6 = "" }), "not in router gw's site prefix"},
		{with(func(_ *RouterSpec, h *HostSpec) { h.DHCPRange = "10.20.0.100,10.20.0.200" }), "no DHCPRange"},
		{Spec{RunID: "t9", Routers: []RouterSpec{gw, gw}}, "duplicate"},
	} {
		_, err := tc.spec.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.spec.Routers, err, tc.want)
		}
	}
}
