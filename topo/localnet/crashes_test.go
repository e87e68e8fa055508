package localnet

import (
	"reflect"
	"testing"
)

func TestCrashLines(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		raw        string
		want       []string
	}{{
		// The lines of a real OVN 25.03.0 ovn-controller crash and its
		// monitor's restart are picked; ordinary errors and warnings are not.
		name: "ovn-controller",
		file: "node1-ovn-controller.log",
		raw: `2026-12-02T02:06:20.731Z|00053|binding|INFO|lsp-b: Claiming 0a:58:00:00:00:01
2026-12-02T02:06:20.732Z|00054|backtrace|ERR|lib/vlog.c:1299 backtrace:
2026-12-02T02:06:20.732Z|00055|util|EMER|lib/ovsdb-idl.c:3598: assertion row->new_datum != NULL failed in ovsdb_idl_txn_write__()
2026-12-02T02:06:20.790Z|00002|daemon_unix(monitor)|ERR|1 crashes: pid 4242 died, killed (Aborted), core dumped, restarting
2026-12-02T02:06:21.000Z|00003|lflow|WARN|error parsing match "inport == @a1"
2026-12-02T02:06:22.000Z|00004|reconnect|ERR|unix:/tmp/sb.sock: no response to inactivity probe
`,
		want: []string{
			"2026-12-02T02:06:20.732Z|00055|util|EMER|lib/ovsdb-idl.c:3598: assertion row->new_datum != NULL failed in ovsdb_idl_txn_write__()",
			"2026-12-02T02:06:20.790Z|00002|daemon_unix(monitor)|ERR|1 crashes: pid 4242 died, killed (Aborted), core dumped, restarting",
		},
	}, {
		// A Go panic in ovnkube's output is a crash; a log line that
		// mentions a panic is not.
		name: "go panic",
		file: "nqos-e2e-control-plane-ovnkube.stdout",
		raw: `I1202 17:20:01.000000   12 nad_controller.go:200] Adding NAD vms/tenant-blue
E1202 17:20:01.100000   12 runtime.go:79] Observed a panic: "invalid memory address or nil pointer dereference"
panic: runtime error: invalid memory address or nil pointer dereference [recovered]
	panic: runtime error: invalid memory address or nil pointer dereference
fatal error: concurrent map writes
`,
		want: []string{
			"panic: runtime error: invalid memory address or nil pointer dereference [recovered]",
			"fatal error: concurrent map writes",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := crashLines(tc.file, []byte(tc.raw))
			var want []Crash
			for _, l := range tc.want {
				want = append(want, Crash{tc.file, l})
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("crashLines = %q, want %q", got, want)
			}
		})
	}
}
