package localnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// dump is one command whose output Collect saves into file.
type dump struct {
	file, netns string
	env         []string
	argv        []string
}

// Collect writes the run's daemon logs, dumps of every zone's NB and SB
// (interconnect: files prefixed with the zone's node) and of every
// node's OVS (bridges, OpenFlow flows, meters) into dir.
func (t *Testbed) Collect(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("testbed %s: collect into %s: %w", t.st.RunID, dir, err)
	}
	logs, err := t.daemonLogs()
	errs := []error{err}
	for _, l := range logs {
		raw, err := os.ReadFile(l)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, t.logName(l)), raw, 0o644)
		}
		errs = append(errs, err)
	}
	var dumps []dump
	for _, z := range t.Zones() {
		p := prefixed(z.Owner, "")
		dumps = append(dumps,
			dump{p + "nb-show.txt", "", nil, []string{"ovn-nbctl", "--db=" + z.NB, "show"}},
			dump{p + "nb-dump.txt", "", nil, []string{"ovsdb-client", "dump", z.NB, "OVN_Northbound"}},
			dump{p + "sb-show.txt", "", nil, []string{"ovn-sbctl", "--db=" + z.SB, "show"}},
			dump{p + "sb-dump.txt", "", nil, []string{"ovsdb-client", "dump", z.SB, "OVN_Southbound"}})
	}
	for _, n := range t.st.Nodes {
		dumps = append(dumps,
			dump{n.Name + "-ovs-show.txt", n.Netns, nodeEnv(n), []string{"ovs-vsctl", "--db=" + n.DB, "show"}},
			dump{n.Name + "-flows.txt", n.Netns, nodeEnv(n), []string{"ovs-ofctl", "-O", "OpenFlow15", "dump-flows", t.ofTarget(n)}},
			dump{n.Name + "-meters.txt", n.Netns, nodeEnv(n), []string{"ovs-ofctl", "-O", "OpenFlow15", "dump-meters", t.ofTarget(n)}})
	}
	for _, d := range dumps {
		out, err := t.run.run(ctx, d.netns, d.env, d.argv...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.WriteFile(filepath.Join(dir, d.file), []byte(out), 0o644))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("testbed %s: collect: %w", t.st.RunID, err)
	}
	return nil
}

// ofTarget is how ovs-ofctl reaches a node's br-int: by name in the
// node's run directory, or through a KinD node container's root.
func (t *Testbed) ofTarget(n Node) string { return t.cluster().ofTarget(n) }
