package cni

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// The external_ids keys the plugin writes on its Interface rows besides
// OVN's iface-id, attached-mac and iface-status; the harness reads them.
const (
	keyNetns   = "nqos-cni/netns"
	keyIfName  = "nqos-cni/ifname"
	keyPod     = "nqos-cni/pod"
	keySandbox = "nqos-cni/sandbox"
	// keyIfaceIDVer is OVN's: ovn-controller binds an LSP whose
	// options:iface-id-ver is set only to an interface with the same value.
	keyIfaceIDVer = "iface-id-ver"
)

// vsctlTimeout is ovs-vsctl's own bound (seconds) on one invocation.
const vsctlTimeout = "30"

// ovs runs ovs-vsctl against one database and bridge.
type ovs struct {
	vsctl, db, bridge string
}

func newOVS(c *NetConf) ovs { return ovs{vsctl: c.Vsctl, db: c.OVSDB, bridge: c.Bridge} }

// run runs ovs-vsctl with args and returns its trimmed stdout; stderr is
// in the error.
func (o ovs) run(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"--db=" + o.db, "--timeout=" + vsctlTimeout}, args...)
	cmd := exec.CommandContext(ctx, o.vsctl, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", o.vsctl, strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// quote makes s one OVSDB string atom for ovs-vsctl.
func quote(s string) string { return strconv.Quote(s) }

// addPort adds name to the bridge with the external_ids and waits until
// ovs-vswitchd has opened it (an ofport, no error).
func (o ovs) addPort(ctx context.Context, name string, ids map[string]string) error {
	args := []string{"add-port", o.bridge, name, "--", "set", "Interface", name}
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "external_ids:"+quote(k)+"="+quote(ids[k]))
	}
	if _, err := o.run(ctx, args...); err != nil {
		return fmt.Errorf("add port %s to %s: %w", name, o.bridge, err)
	}
	out, err := o.run(ctx, "get", "Interface", name, "ofport", "error")
	if err != nil {
		return fmt.Errorf("port %s on %s: %w", name, o.bridge, err)
	}
	if f := strings.SplitN(out, "\n", 2); len(f) != 2 || f[0] == "-1" || f[0] == "[]" || f[1] != "[]" {
		return fmt.Errorf("port %s on %s: ovs-vswitchd did not open it (ofport, error: %q)", name, o.bridge, out)
	}
	return nil
}

// delPort removes the port from whatever bridge holds it; a missing port
// is no error.
func (o ovs) delPort(ctx context.Context, name string) error {
	if _, err := o.run(ctx, "--if-exists", "del-port", name); err != nil {
		return fmt.Errorf("delete port %s: %w", name, err)
	}
	return nil
}

// portsOf lists the Interface rows whose nqos-cni/sandbox is containerID.
func (o ovs) portsOf(ctx context.Context, containerID string) ([]string, error) {
	out, err := o.run(ctx, "--bare", "--columns=name", "find", "Interface",
		"external_ids:"+quote(keySandbox)+"="+quote(containerID))
	if err != nil {
		return nil, fmt.Errorf("ports of sandbox %s: %w", containerID, err)
	}
	return strings.Fields(out), nil
}

// portState is what CHECK compares: the bridge holding the port, its
// ofport and its external_ids.
type portState struct {
	bridge string
	ofport string
	ids    map[string]string
}

// port reads the state of port name.
func (o ovs) port(ctx context.Context, name string) (portState, error) {
	br, err := o.run(ctx, "port-to-br", name)
	if err != nil {
		return portState{}, fmt.Errorf("port %s: %w", name, err)
	}
	out, err := o.run(ctx, "--format=json", "--columns=ofport,external_ids", "list", "Interface", name)
	if err != nil {
		return portState{}, fmt.Errorf("port %s: %w", name, err)
	}
	ofport, ids, err := decodeInterface(out)
	if err != nil {
		return portState{}, fmt.Errorf("port %s: %w", name, err)
	}
	return portState{bridge: br, ofport: ofport, ids: ids}, nil
}
