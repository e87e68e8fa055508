package vmlife

import (
	"testing"
)

// Scenario 7: a guest in the capped batch class sends raw frames with the
// production VM's source IP, and with its IP and MAC. The match is the
// ingress port, so frames with the foreign IP keep the batch class (its
// DSCP and its meter); frames with the foreign MAC are dropped by OVN's
// port security (the LSP's port_security holds the guest's MAC) and
// counted as dropped, never as production.
func TestSpoofing(t *testing.T) {
	e := boot(t, "v4")
	e.createNQ(prodObj, "production", 50, prodDSCP, 0, 0)
	e.createNQ(batchObj, "batch", 40, batchDSCP, batchKbps, batchKbits)
	prod := e.createVM(vm("prod", "node1", "02:00:00:00:40:01", "10.20.4.1/16", "production"))
	spoofer := e.createVM(vm("spoofer", "node1", "02:00:00:00:40:02", "10.20.4.2/16", "batch"))
	e.waitMembers(prodObj, e.lsp(prod))
	e.waitMembers(batchObj, e.lsp(spoofer))

	res, err := e.ops.Spoof(e.ctx, SpoofSpec{Spoofer: spoofer, Victim: prod, SpooferDSCP: batchDSCP, VictimDSCP: prodDSCP,
		RateKbps: batchKbps, BurstKbits: batchKbits, Peer: peerHost, VLAN: networkVLAN, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logJSON(t, "spoofing", res)
	for _, f := range res.Flows {
		t.Logf("%-20s src %s/%s: sent %d (%.0f kbit/s), seen %d (%.0f kbit/s), dropped %d, DSCP %v, as victim %d",
			f.Name, f.SrcIP, f.SrcMAC, f.Sent, f.OfferedKbps, f.Seen, f.DeliveredKbps, f.Dropped, f.DSCP, f.MisClassified)
	}
	for _, v := range res.Verdicts {
		t.Log(v.String())
		if !v.Pass {
			t.Errorf("verdict failed: %s", v)
		}
	}
	ip, _ := res.Flow(FlowSpooferVictimIP)
	if ip.Seen == 0 || ip.MisClassified != 0 || ip.DSCP[batchDSCP] != ip.Seen {
		t.Errorf("frames with the victim's IP: seen %d, DSCP %v; want all with DSCP %d", ip.Seen, ip.DSCP, batchDSCP)
	}
	mac, _ := res.Flow(FlowSpooferVictimMAC)
	if mac.Sent == 0 || mac.Seen != 0 || mac.Dropped != mac.Sent {
		t.Errorf("frames with the victim's MAC: sent %d, seen %d, dropped %d; want all dropped by port security", mac.Sent, mac.Seen, mac.Dropped)
	}
	own, _ := res.Flow(FlowVictimOwn)
	if own.Sent == 0 || own.Seen != own.Sent || own.DSCP[prodDSCP] != own.Seen {
		t.Errorf("victim's own frames: sent %d, seen %d, DSCP %v; want all with DSCP %d", own.Sent, own.Seen, own.DSCP, prodDSCP)
	}
}
