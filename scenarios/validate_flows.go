package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/nqos/nqos/internal/qos"
)

// Flow defaults.
const (
	DefaultPort     = 5201
	DefaultDuration = 5 * time.Second
	DefaultBelow    = 0.15
)

// RunFamilies are the families a flow runs in: its own list (default:
// the scenario's), restricted to the scenario's.
func (sc *Scenario) RunFamilies(f *Flow) []Family {
	if len(f.Families) == 0 {
		return sc.Families
	}
	var out []Family
	for _, fam := range f.Families {
		if slices.Contains(sc.Families, fam) {
			out = append(out, fam)
		}
	}
	return out
}

func (v *validator) flowDefs() error {
	v.flows = map[string]*Flow{}
	for i := range v.sc.Flows {
		f := &v.sc.Flows[i]
		path := fmt.Sprintf("flows[%d]", i)
		if !idRE.MatchString(f.Name) {
			return v.d.errAt(path+".name", "invalid flow name %q (want lower-case letters, digits and -)", f.Name)
		}
		if v.flows[f.Name] != nil {
			return v.d.errAt(path+".name", "duplicate flow %q", f.Name)
		}
		v.flows[f.Name] = f
		for _, check := range []func(*Flow, string) error{v.flowEnds, v.flowShape} {
			if err := check(f, path); err != nil {
				return err
			}
		}
		for j := range f.Expect {
			if err := v.flowExpect(f, &f.Expect[j], fmt.Sprintf("%s.expect[%d]", path, j)); err != nil {
				return err
			}
		}
	}
	return nil
}

// flowEnds checks that the flow leaves a VM towards a host or VM on the
// same network, with addresses in every family it runs in.
func (v *validator) flowEnds(f *Flow, path string) error {
	from, ok := v.vms[f.From]
	if !ok {
		return v.d.errAt(path+".from", "unknown VM %q (flows leave a VM: QoS applies to VM egress)", f.From)
	}
	_, _, ok = v.peer(f.To)
	switch {
	case !ok:
		return v.d.errAt(path+".to", "unknown VM or host %q", f.To)
	case f.To == f.From:
		return v.d.errAt(path+".to", "flow from %q to itself", f.From)
	}
	if f.Network != "" && v.hosts[f.To] != nil {
		return v.d.errAt(path+".network", "only a flow between two VMs picks its network (%q is a host)", f.To)
	}
	network := v.sc.FlowNetwork(f)
	if network == "" && f.Network != "" {
		return v.d.errAt(path+".network", "%q and %q do not both have a NIC on network %q", f.From, f.To, f.Network)
	}
	if network == "" {
		toNets := []string{}
		if h := v.hosts[f.To]; h != nil {
			toNets = append(toNets, h.Network)
		} else {
			toNets = v.vms[f.To].Networks()
		}
		return v.d.errAt(path+".to", "%q is on networks %v, %q on %v: no NIC of %q on them", f.To, toNets, f.From, from.Networks(), f.From)
	}
	_, fromNIC, _ := from.NIC(network)
	toAddrs := v.sc.Host(f.To).addressesOr(v.sc.VM(f.To), network)
	if err := v.noDuplicateFamilies(path+".ipFamilies", f.Families); err != nil {
		return err
	}
	fams := v.sc.RunFamilies(f)
	if len(fams) == 0 {
		return v.d.errAt(path+".ipFamilies", "flow runs in %v but the scenario only in %v", f.Families, v.sc.Families)
	}
	for _, fam := range fams {
		if !v.nicAddress(f.From, network, fromNIC.Addresses, fam) || !v.nicAddress(f.To, network, toAddrs, fam) {
			return v.d.errAt(path, "flow runs in %s but %q or %q has no %s address", fam, f.From, f.To, fam)
		}
	}
	return v.reach(f, path, network, fromNIC, fams)
}

func (v *validator) peer(name string) (network string, addrs Addresses, ok bool) {
	if vm, ok := v.vms[name]; ok {
		return vm.Network, vm.Addresses, true
	}
	if h, ok := v.hosts[name]; ok {
		return h.Network, h.Addresses, true
	}
	return "", Addresses{}, false
}

func (v *validator) flowShape(f *Flow, path string) error {
	if f.Port == 0 {
		f.Port = DefaultPort
	}
	if f.Tool == "" {
		f.Tool = ToolIPerf3
	}
	if f.Duration == 0 {
		f.Duration = DefaultDuration
	}
	switch {
	case f.Protocol != "udp" && f.Protocol != "tcp":
		return v.d.errAt(path+".protocol", "invalid protocol %q (want udp or tcp)", f.Protocol)
	case f.Port < 1 || f.Port > 65535:
		return v.d.errAt(path+".port", "port %d out of range 1..65535", f.Port)
	case f.Tool != ToolIPerf3 && f.Tool != ToolPackets:
		return v.d.errAt(path+".tool", "invalid tool %q (want iperf3 or packets)", f.Tool)
	case f.Protocol == "udp" && f.Rate <= 0:
		return v.d.errAt(path+".rate", "a UDP flow needs an offered rate")
	case f.Tool == ToolPackets && f.Rate <= 0:
		return v.d.errAt(path+".rate", "a packets flow needs an offered rate")
	case f.Payload != 0 && (f.Tool != ToolPackets || f.Payload < 64 || f.Payload > 1400):
		return v.d.errAt(path+".payload", "payload %d: only for tool packets, 64..1400 bytes", f.Payload)
	case len(f.Expect) == 0:
		return v.d.errAt(path+".expect", "a flow needs at least one expectation")
	}
	return nil
}

func (v *validator) flowExpect(f *Flow, e *FlowExpect, path string) error {
	switch {
	case e.When != nil && e.When.OVN.Op == "" && e.When.IPFamily == "":
		return v.d.errAt(path+".when", "a condition needs ovn, ipFamily or both")
	case e.DSCP == nil && !e.Unmarked && e.PolicedBy == nil && e.Throughput == nil && !e.Undelivered:
		return v.d.errAt(path, "expectation asserts nothing (set dscp, unmarked, policedBy, throughput or undelivered)")
	case e.Undelivered && (e.DSCP != nil || e.Unmarked || e.PolicedBy != nil || e.Throughput != nil):
		return v.d.errAt(path+".undelivered", "an undelivered flow has no packets to mark, police or measure")
	case e.Undelivered && (f.Tool != ToolIPerf3 || v.vms[f.To] == nil):
		return v.d.errAt(path+".undelivered", "only an iperf3 flow to another VM resolves its peer's address (flow %s: tool %s, to %q)", f.Name, f.Tool, f.To)
	case e.DSCP != nil && (*e.DSCP < 0 || *e.DSCP > 63):
		return v.d.errAt(path+".dscp", "DSCP %d out of range 0..63", *e.DSCP)
	case e.DSCP != nil && e.Unmarked:
		return v.d.errAt(path+".unmarked", "a flow cannot be both unmarked and marked DSCP %d", *e.DSCP)
	}
	if t := e.Throughput; t != nil {
		if err := v.throughput(f, t, path+".throughput"); err != nil {
			return err
		}
	}
	if p := e.PolicedBy; p != nil {
		return v.policedShape(f, e, path+".policedBy")
	}
	return nil
}

func (v *validator) throughput(f *Flow, t *Throughput, path string) error {
	switch {
	case t.Min == 0 && t.Max == 0:
		return v.d.errAt(path, "throughput needs min or max")
	case t.Max != 0 && t.Min > t.Max:
		return v.d.errAt(path+".min", "min %s above max %s", t.Min, t.Max)
	case f.Rate > 0 && t.Min > f.Rate:
		return v.d.errAt(path+".min", "min %s above the offered rate %s", t.Min, f.Rate)
	}
	return nil
}

// policedShape checks what can be checked before the rule is resolved.
func (v *validator) policedShape(f *Flow, e *FlowExpect, path string) error {
	p := e.PolicedBy
	p.belowSet = p.Below != 0
	if p.Below == 0 {
		p.Below = DefaultBelow
	}
	if p.Below < 0 || p.Below >= 1 {
		return v.d.errAt(path+".below", "below %g out of range [0, 1)", p.Below)
	}
	m, ok := v.sc.Manifests.Get(p.Manifest)
	if !ok || m.QoS == nil {
		return v.d.errAt(path+".manifest", "unknown NetworkQoS manifest %q", p.Manifest)
	}
	return nil
}

// resolvePolicing fills the rate and burst of a flow's policedBy
// expectations from the manifest revisions in force when it starts.
// group are the flows started in the same step: UDP flows sharing the
// meter count towards the offered rate that must exceed the policed one.
func (v *validator) resolvePolicing(f *Flow, rev func(id string) *Manifest, path string, group []string) error {
	for j := range f.Expect {
		e := &f.Expect[j]
		p := e.PolicedBy
		if p == nil {
			continue
		}
		epath := fmt.Sprintf("%s.expect[%d].policedBy", v.flowPath(f), j)
		m := rev(p.Manifest)
		if p.Rule < 0 || p.Rule >= len(m.QoS.Spec.Egress) {
			return v.d.errAt(epath+".rule", "%s has egress rules 0..%d, not %d", m.Key(), len(m.QoS.Spec.Egress)-1, p.Rule)
		}
		bw := m.QoS.Spec.Egress[p.Rule].Bandwidth
		if bw == nil || bw.Rate == 0 {
			return v.d.errAt(epath, "rate bound on flow %q, but egress rule %d of %s (revision %d, in force at %s) has no bandwidth", f.Name, p.Rule, m.Key(), m.Revision, path)
		}
		p.RateKbps, p.BurstKbit = bw.Rate, bw.Burst
		p.PerPort = m.QoS.Annotations[qos.BandwidthScopeAnnotation] == qos.BandwidthScopePerPort
		rate := Bitrate(float64(bw.Rate) * 1000)
		if offered := v.meterOffered(f, p, group); f.Protocol == "udp" && offered <= rate {
			return v.d.errAt(epath, "offered rate %s (%s with the UDP flows started with it that share its meter) does not exceed the policed rate %s, so the bound cannot be observed",
				f.Rate, offered, rate)
		}
		if p.belowSet && !p.FloorJudged(f) {
			return v.d.errAt(epath+".below", "below has no effect: the policing floor is judged only for UDP flows offered at least twice the policed rate %s", rate)
		}
		if e.Throughput != nil && e.Throughput.Min > rate {
			return v.d.errAt(epath, "throughput.min %s above the policed rate %s", e.Throughput.Min, rate)
		}
	}
	return nil
}

func (v *validator) flowPath(f *Flow) string {
	for i := range v.sc.Flows {
		if &v.sc.Flows[i] == f {
			return fmt.Sprintf("flows[%d]", i)
		}
	}
	return "flows"
}

// meterOffered is the offered rate of the UDP flows of group (f among
// them) that share f's meter for p: policed by the same rule, sent from
// the same node (from the same VM with a per-port scope), in a common IP
// family. They are judged together, on their sum.
func (v *validator) meterOffered(f *Flow, p *Policed, group []string) Bitrate {
	sum := f.Rate
	for _, name := range group {
		g := v.flows[name]
		if g == nil || g == f || g.Protocol != "udp" || !sharesMeter(g, p) {
			continue
		}
		sameSender := g.From == f.From || (!p.PerPort && v.vms[g.From].Node == v.vms[f.From].Node)
		common := slices.ContainsFunc(v.sc.RunFamilies(g), func(fam Family) bool { return slices.Contains(v.sc.RunFamilies(f), fam) })
		if sameSender && common {
			sum += g.Rate
		}
	}
	return sum
}

func sharesMeter(g *Flow, p *Policed) bool {
	return slices.ContainsFunc(g.Expect, func(e FlowExpect) bool {
		return e.PolicedBy != nil && e.PolicedBy.Manifest == p.Manifest && e.PolicedBy.Rule == p.Rule
	})
}
