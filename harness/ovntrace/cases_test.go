package ovntrace

import (
	"net"
	"net/netip"

	"github.com/nqos/nqos/internal/qos"
)

// The live topology: the OKEP-6815 worked example on one ipamless
// localnet switch, plus a second switch with an allow-related ACL (so
// traces pass through ct_next) and a rate-only row.
const (
	swBlue  = "tenant.blue_ovn_localnet_switch"
	lnBlue  = "tenant.blue_ovn_localnet_port"
	swACL   = "tenant.acl_ovn_localnet_switch"
	lnACL   = "tenant.acl_ovn_localnet_port"
	gateway = "02:00:00:00:00:fe" // an external MAC: unknown to OVN
)

// vmMAC is each VM port's MAC; ports are MAC-only (ipamless).
var vmMAC = map[string]string{
	"vm-payments": "0a:58:0a:00:00:05", // app=payments, tier=production
	"vm-prod":     "0a:58:0a:00:00:06", // tier=production
	"vm-split":    "0a:58:0a:00:00:07", // tier=production + a lower-priority backup object
	"vm-other":    "0a:58:0a:00:00:08", // in no group
	"vm-locked":   "0a:58:0a:00:00:09", // port security on its MAC
	"vm-acl":      "0a:58:0a:00:01:05",
}

// rows are the compiled QoS rows the live test installs, keyed for the
// cases' intent; OVN priorities as in the OKEP worked example.
var rows = map[string]qos.QoSRow{
	"backup-r0":     {Switch: swBlue, Priority: 10700, Match: "inport == @pg_backup && (ip4 || ip6)", Action: qos.Action{DSCP: 46}},
	"backup-r1":     {Switch: swBlue, Priority: 10701, Match: "inport == @pg_backup && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049", Action: qos.Action{DSCP: 8}, Bandwidth: &qos.Bandwidth{Rate: 100000, Burst: 5000}},
	"production-r0": {Switch: swBlue, Priority: 10600, Match: "inport == @pg_prod && (ip4 || ip6)", Action: qos.Action{DSCP: 46}},
	"lowbackup-r0":  {Switch: swBlue, Priority: 10500, Match: "inport == @pg_lowbackup && (ip4 || ip6)", Action: qos.Action{DSCP: 46}},
	"lowbackup-r1":  {Switch: swBlue, Priority: 10501, Match: "inport == @pg_lowbackup && ip4.dst == 10.20.0.0/16 && tcp && tcp.dst == 2049", Action: qos.Action{DSCP: 8}, Bandwidth: &qos.Bandwidth{Rate: 100000, Burst: 5000}},
}

// want is the expected Egress of a prediction.
type want struct {
	deliveries int
	port, typ  string // "" port: no Egress
	dscp       Marking
	meters     []Meter
	qos        []int // priorities of the QoS stage hits, in order
}

type traceCase struct {
	name string
	mf   Microflow
	// intent is the key of the compiled row that wins under the OKEP's
	// single-stage semantics; "" means no row matches.
	intent string
	want   want  // OVN 23.03 (two QoS stages), as recorded in testdata/ovn-23.03
	single *want // where one QoS stage differs (OVN >= 24.09)
	// splitMeter: with separate stages a lower-priority row's meter
	// applies too, so intent and trace disagree on the meter.
	splitMeter bool
	// skipAgree: no compiled NetworkQoS row models this flow (port
	// security, a rate-only row), so only the prediction is checked.
	skipAgree bool
}

func mac(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

func flow(dp, port, dstMAC, src, dst string, p Proto, dport uint16) Microflow {
	return Microflow{Datapath: dp, InPort: port, EthSrc: mac(vmMAC[port]), EthDst: mac(dstMAC),
		Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), Proto: p, DstPort: dport}
}

var (
	meterBackup = []Meter{{Rate: 100000, Burst: 5000}}
	toUplink    = want{deliveries: 1, port: lnBlue, typ: "localnet", meters: []Meter{}, qos: []int{}}
)

func (w want) with(d Marking, meters []Meter, prios ...int) want {
	w.dscp, w.meters, w.qos = d, meters, append([]int{}, prios...)
	if w.meters == nil {
		w.meters = []Meter{}
	}
	return w
}

// traceCases is every microflow the live test traces and records.
func traceCases() []traceCase {
	return []traceCase{
		{name: "backup-v4", intent: "backup-r1",
			mf:     flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.20.0.7", ProtoTCP, 2049),
			want:   toUplink.with(Mark(8), meterBackup, 10701, 10701),
			single: ptr(toUplink.with(Mark(8), meterBackup, 10701))},
		{name: "other-v4-udp", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", gateway, "10.0.0.5", "192.168.50.10", ProtoUDP, 5201),
			want: toUplink.with(Mark(46), nil, 10700)},
		{name: "nfs-outside-block", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.21.0.7", ProtoTCP, 2049),
			want: toUplink.with(Mark(46), nil, 10700)},
		{name: "other-v6-tcp", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", gateway, "fd00::5", "fd20::7", ProtoTCP, 443),
			want: toUplink.with(Mark(46), nil, 10700)},
		{name: "icmp-v4", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", gateway, "10.0.0.5", "10.20.0.7", ProtoICMP, 0),
			want: toUplink.with(Mark(46), nil, 10700)},
		{name: "not-in-group", intent: "",
			mf:   flow(swBlue, "vm-other", gateway, "10.0.0.8", "10.20.0.7", ProtoTCP, 2049),
			want: toUplink.with(Marking{}, nil)},
		{name: "production-only", intent: "production-r0",
			mf:   flow(swBlue, "vm-prod", gateway, "10.0.0.6", "10.20.0.7", ProtoTCP, 2049),
			want: toUplink.with(Mark(46), nil, 10600)},
		{name: "split-stage", intent: "production-r0",
			mf:     flow(swBlue, "vm-split", gateway, "10.0.0.7", "10.20.0.7", ProtoTCP, 2049),
			want:   toUplink.with(Mark(46), meterBackup, 10600, 10501),
			single: ptr(toUplink.with(Mark(46), nil, 10600)), splitMeter: true},
		{name: "east-west-to-vm", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", vmMAC["vm-other"], "10.0.0.5", "10.0.0.8", ProtoUDP, 5201),
			want: want{deliveries: 1, port: "vm-other", typ: ""}.with(Mark(46), nil, 10700)},
		{name: "flood-broadcast", intent: "backup-r0",
			mf:   flow(swBlue, "vm-payments", "ff:ff:ff:ff:ff:ff", "10.0.0.5", "10.0.0.255", ProtoUDP, 9),
			want: want{deliveries: 5, port: lnBlue, typ: "localnet"}.with(Mark(46), nil, 10700)},
		{name: "port-security-drop", skipAgree: true,
			mf:   Microflow{Datapath: swBlue, InPort: "vm-locked", EthSrc: mac("0a:58:0a:00:00:99"), EthDst: mac(gateway), Src: netip.MustParseAddr("10.0.0.9"), Dst: netip.MustParseAddr("10.20.0.7"), Proto: ProtoTCP, DstPort: 2049},
			want: want{deliveries: 0}},
		{name: "acl-ct-rate-only", skipAgree: true,
			mf:   flow(swACL, "vm-acl", gateway, "10.1.0.5", "10.20.0.7", ProtoSCTP, 5000),
			want: want{deliveries: 1, port: lnACL, typ: "localnet"}.with(Marking{}, []Meter{{Rate: 2000}}, 100)},
		{name: "acl-ct-tcp", skipAgree: true,
			mf:   flow(swACL, "vm-acl", gateway, "10.1.0.5", "10.20.0.7", ProtoTCP, 80),
			want: want{deliveries: 1, port: lnACL, typ: "localnet"}.with(Marking{}, nil)},
	}
}

func ptr[T any](v T) *T { return &v }

// wantFor is the expected egress on an OVN with separate mark and meter
// stages (split) or one QoS stage.
func (tc traceCase) wantFor(split bool) want {
	if !split && tc.single != nil {
		return *tc.single
	}
	return tc.want
}
