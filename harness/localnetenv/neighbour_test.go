package localnetenv

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/nettest"
)

// refreshHost makes a host that holds no entry for a guest learn the
// guest's MAC from the guest's solicitation, and leaves a guest that
// knows no entry for the host alone (a routed destination).
func TestRefreshHost(t *testing.T) {
	const guestMAC, hostMAC = "02:00:00:00:99:01", "02:00:00:00:99:02"
	for _, fam := range []struct{ name, guest, host, bits string }{
		{"v4", "10.99.0.1", "10.99.0.2", "/24"},
		{"v6", "fd00:99::1", "fd00:99::2", "/64"},
	} {
		t.Run(fam.name, func(t *testing.T) {
			bed := nettest.New(t, "nbr"+fam.name)
			guest, host := bed.Netns("guest"), bed.Netns("host")
			bed.Veth(nettest.End{Netns: guest, Name: "g0", MAC: guestMAC}, nettest.End{Netns: host, Name: "h0", MAC: hostMAC})
			bed.Addr(guest, "g0", fam.guest+fam.bits)
			bed.Addr(host, "h0", fam.host+fam.bits)
			g, h := netip.MustParseAddr(fam.guest), netip.MustParseAddr(fam.host)
			ctx := context.Background()

			// unknown host: nothing is sent, so the host learns nothing
			if err := refreshHost(ctx, guest, "g0", g, h); err != nil {
				t.Fatal(err)
			}
			if mac := neighbour(t, host, "h0", g); mac != "" {
				t.Fatalf("host learned the guest (%s) though the guest knew no entry to refresh", mac)
			}

			// the guest knows the host; the host has no entry for the guest
			hw, _ := net.ParseMAC(hostMAC)
			if err := netns.Named(guest).WithConn(func(c *netns.Conn) error {
				return c.SetNeigh("g0", h, hw, netns.Reachable)
			}); err != nil {
				t.Fatal(err)
			}
			if err := refreshHost(ctx, guest, "g0", g, h); err != nil {
				t.Fatal(err)
			}
			if mac := neighbour(t, host, "h0", g); mac != guestMAC {
				t.Errorf("host's entry for the guest after the refresh: %q, want %s", mac, guestMAC)
			}
			if mac := neighbour(t, guest, "g0", h); mac != hostMAC {
				t.Errorf("guest's entry for the host after the refresh: %q, want %s", mac, hostMAC)
			}
		})
	}
}

func neighbour(t *testing.T, ns, dev string, ip netip.Addr) string {
	t.Helper()
	var mac net.HardwareAddr
	if err := netns.Named(ns).WithConn(func(c *netns.Conn) (err error) {
		mac, err = c.Neigh(dev, ip)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if mac == nil {
		return ""
	}
	return mac.String()
}
