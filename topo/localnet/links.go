package localnet

import (
	"context"
	"fmt"
	"strconv"
)

// veth describes a veth pair created in the root namespace with explicit,
// distinct ifindexes, then moved (and optionally renamed) into its
// namespaces. Every end has TX offload turned off.
type veth struct {
	a, b           string // names at creation
	aNetns, bNetns string
	aRename        string // name of end a inside aNetns ("" keeps a)
	bRename        string
	mtu            int
	aMAC           string
}

// addNetns creates a network namespace with loopback up; an existing
// namespace of that name is an error.
func (r runner) addNetns(ctx context.Context, name string) error {
	if err := r.script(ctx, "", []string{"ip", "netns", "add", name}); err != nil {
		return err
	}
	return r.script(ctx, name, []string{"ip", "link", "set", "lo", "up"})
}

// addVeth creates the pair with ifindexes idx and idx+1 and moves its ends.
func (r runner) addVeth(ctx context.Context, v veth, idx int) error {
	add := []string{"ip", "link", "add", v.a, "index", strconv.Itoa(idx)}
	if v.aMAC != "" {
		add = append(add, "address", v.aMAC)
	}
	add = append(add, "mtu", strconv.Itoa(v.mtu), "type", "veth", "peer", "name", v.b, "index", strconv.Itoa(idx+1), "mtu", strconv.Itoa(v.mtu))
	if err := r.script(ctx, "", add); err != nil {
		return fmt.Errorf("veth %s/%s: %w", v.a, v.b, err)
	}
	for _, end := range []struct{ name, netns, rename string }{{v.a, v.aNetns, v.aRename}, {v.b, v.bNetns, v.bRename}} {
		if err := r.placeEnd(ctx, end.name, end.netns, end.rename); err != nil {
			return fmt.Errorf("veth %s/%s: %w", v.a, v.b, err)
		}
	}
	return nil
}

// placeEnd moves one veth end into netns, renames it, turns TX offload
// off and sets it up.
func (r runner) placeEnd(ctx context.Context, name, netns, rename string) error {
	if err := r.script(ctx, "", []string{"ip", "link", "set", name, "netns", netns}); err != nil {
		return err
	}
	if rename != "" {
		if err := r.script(ctx, netns, []string{"ip", "link", "set", name, "name", rename}); err != nil {
			return err
		}
		name = rename
	}
	return r.script(ctx, netns,
		[]string{"ethtool", "-K", name, "tx", "off"},
		[]string{"ip", "link", "set", name, "up"})
}
