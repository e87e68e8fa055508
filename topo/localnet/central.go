package localnet

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/nqos/nqos/internal/ovninstall"
)

func (t *Testbed) nbSock() string { return filepath.Join(t.dir, "nb.sock") }
func (t *Testbed) sbSock() string { return filepath.Join(t.dir, "sb.sock") }
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

// startCentral creates the NB and SB databases from the selected OVN
// install's schemas and starts their servers and ovn-northd in the root
// namespace.
func (t *Testbed) startCentral(ctx context.Context) error {
	inst, _, err := ovninstall.Current(ctx)
	if err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	t.ovn = inst
	for _, db := range []struct{ name, schema, sock string }{
		{DaemonNB, inst.NBSchema(), t.nbSock()}, {DaemonSB, inst.SBSchema(), t.sbSock()},
	} {
		file := filepath.Join(t.dir, db.name+".db")
		if _, err := t.run.run(ctx, "", nil, "ovsdb-tool", "create", file, db.schema); err != nil {
			return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
		}
		if err := t.addDaemon(ctx, t.ovsdbDaemon("", db.name, "", file, db.sock)); err != nil {
			return err
		}
	}
	if _, err := t.NBCtl(ctx, "init"); err != nil {
		return err
	}
	if _, err := t.run.run(ctx, "", nil, "ovn-sbctl", "--db=unix:"+t.sbSock(), "init"); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	northd := daemonState{Name: DaemonNorthd, Log: t.logPath(DaemonNorthd),
		Pidfile: filepath.Join(t.dir, DaemonNorthd+".pid"),
		Argv: []string{"ovn-northd", "--ovnnb-db=unix:" + t.nbSock(), "--ovnsb-db=unix:" + t.sbSock(),
			"--pidfile=" + filepath.Join(t.dir, DaemonNorthd+".pid"), "--unixctl=" + filepath.Join(t.dir, DaemonNorthd+".ctl"),
			"--log-file=" + t.logPath(DaemonNorthd), "--detach", "--no-chdir"}}
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

// NBCtl runs ovn-nbctl against the testbed's NB and returns its stdout.
func (t *Testbed) NBCtl(ctx context.Context, args ...string) (string, error) {
	out, err := t.run.run(ctx, "", nil, append([]string{"ovn-nbctl", "--db=" + t.NBAddress()}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return out, nil
}

// SBCtl runs ovn-sbctl against the testbed's SB and returns its stdout.
func (t *Testbed) SBCtl(ctx context.Context, args ...string) (string, error) {
	out, err := t.run.run(ctx, "", nil, append([]string{"ovn-sbctl", "--db=" + t.SBAddress()}, args...)...)
	if err != nil {
		return out, fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return out, nil
}
