package localnet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nqos/nqos/internal/ovninstall"
)

func (t *Testbed) logPath(name string) string {
	return filepath.Join(t.dir, "logs", name+".log")
}

// ovsdbDaemon is an ovsdb-server serving db on a unix socket.
func (t *Testbed) ovsdbDaemon(node, name, netns, db, sock string, extra ...string) daemonState {
	argv := []string{"ovsdb-server", db, "--remote=punix:" + sock,
		"--pidfile=" + filepath.Join(filepath.Dir(sock), name+".pid"),
		"--unixctl=" + filepath.Join(filepath.Dir(sock), name+".ctl"),
		"--log-file=" + t.logPath(prefixed(node, name)), "--detach", "--no-chdir"}
	return daemonState{Node: node, Name: name, Netns: netns, Argv: append(argv, extra...),
		Pidfile: filepath.Join(filepath.Dir(sock), name+".pid"), Log: t.logPath(prefixed(node, name))}
}

func prefixed(node, name string) string {
	if node == "" {
		return name
	}
	return node + "-" + name
}

// startZones declares the zones of the spec's topology and starts
// each: its NB and SB databases from the selected OVN install's schemas,
// their servers and ovn-northd, in the root namespace (unix sockets, so
// every node namespace reaches them).
func (t *Testbed) startZones(ctx context.Context) error {
	inst, _, err := ovninstall.Current(ctx)
	if err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	t.ovn = inst
	names := make([]string, t.st.Spec.Nodes)
	for i := range names {
		names[i] = NodeName(i + 1)
	}
	t.st.Zones = t.st.Spec.Topology.layout().zones(t.dir, names)
	for _, z := range t.st.Zones {
		if err := t.startZone(ctx, z); err != nil {
			return err
		}
	}
	return nil
}

// startZone creates a zone's databases and starts its daemons.
func (t *Testbed) startZone(ctx context.Context, z Zone) error {
	if err := os.MkdirAll(z.Dir, 0o755); err != nil {
		return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
	}
	for _, db := range []struct{ name, schema, sock string }{
		{DaemonNB, t.ovn.NBSchema(), z.nbSock()}, {DaemonSB, t.ovn.SBSchema(), z.sbSock()},
	} {
		file := filepath.Join(z.Dir, db.name+".db")
		if _, err := t.run.run(ctx, "", nil, "ovsdb-tool", "create", file, db.schema); err != nil {
			return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
		}
		if err := t.addDaemon(ctx, t.ovsdbDaemon(z.Owner, db.name, "", file, db.sock)); err != nil {
			return err
		}
	}
	if _, err := t.run.run(ctx, "", nil, "ovn-nbctl", "--db="+z.NB, "init"); err != nil {
		return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
	}
	if _, err := t.run.run(ctx, "", nil, "ovn-sbctl", "--db="+z.SB, "init"); err != nil {
		return fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
	}
	pidfile, log := filepath.Join(z.Dir, DaemonNorthd+".pid"), t.logPath(prefixed(z.Owner, DaemonNorthd))
	northd := daemonState{Node: z.Owner, Name: DaemonNorthd, Log: log, Pidfile: pidfile,
		Argv: []string{"ovn-northd", "--ovnnb-db=" + z.NB, "--ovnsb-db=" + z.SB,
			"--pidfile=" + pidfile, "--unixctl=" + filepath.Join(z.Dir, DaemonNorthd+".ctl"),
			"--log-file=" + log, "--detach", "--no-chdir"}}
	return t.addDaemon(ctx, northd)
}

// addDaemon records a daemon in the state, then starts it.
func (t *Testbed) addDaemon(ctx context.Context, d daemonState) error {
	t.st.Daemons = append(t.st.Daemons, d)
	if err := t.st.save(); err != nil {
		return err
	}
	if err := t.run.startDaemon(ctx, d, 0); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return nil
}

// NBCtl runs ovn-nbctl against the testbed's one NB (central topology
// or KinD) and returns its stdout; on interconnect it fails: name the
// node (NodeNBCtl).
func (t *Testbed) NBCtl(ctx context.Context, args ...string) (string, error) {
	return t.NodeNBCtl(ctx, "", args...)
}

// SBCtl runs ovn-sbctl against the testbed's one SB, as NBCtl.
func (t *Testbed) SBCtl(ctx context.Context, args ...string) (string, error) {
	return t.NodeSBCtl(ctx, "", args...)
}

// NodeNBCtl runs ovn-nbctl against the NB of node's zone.
func (t *Testbed) NodeNBCtl(ctx context.Context, node string, args ...string) (string, error) {
	z, err := t.ZoneOf(node)
	if err != nil {
		return "", err
	}
	return t.ZoneNBCtl(ctx, z, args...)
}

// NodeSBCtl runs ovn-sbctl against the SB of node's zone.
func (t *Testbed) NodeSBCtl(ctx context.Context, node string, args ...string) (string, error) {
	z, err := t.ZoneOf(node)
	if err != nil {
		return "", err
	}
	return t.ZoneSBCtl(ctx, z, args...)
}

// ZoneNBCtl runs ovn-nbctl against a zone's NB and returns its stdout.
func (t *Testbed) ZoneNBCtl(ctx context.Context, z Zone, args ...string) (string, error) {
	out, err := t.run.run(ctx, "", nil, append([]string{"ovn-nbctl", "--db=" + z.NB}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
	}
	return out, nil
}

// ZoneSBCtl runs ovn-sbctl against a zone's SB and returns its stdout.
func (t *Testbed) ZoneSBCtl(ctx context.Context, z Zone, args ...string) (string, error) {
	out, err := t.run.run(ctx, "", nil, append([]string{"ovn-sbctl", "--db=" + z.SB}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: zone %s: %w", t.st.RunID, z.Name, err)
	}
	return out, nil
}
