package cni

import (
	"context"
	"errors"
	"fmt"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/nqos/nqos/internal/netns"
)

// Plugin runs the CNI commands. HostNS is the namespace of the node ends
// and of ovs-vswitchd: the zero NS (the plugin's own) on a node; tests
// point it at the namespace their private OVS runs in.
type Plugin struct {
	HostNS netns.NS
}

// Add plugs every network of the pod's annotation and returns the previous
// result with the new interfaces (node end, then pod end, per network)
// appended, in the configuration's CNI version. On failure nothing it made
// is left.
func (p Plugin) Add(ctx context.Context, args *skel.CmdArgs) (types.Result, error) {
	conf, err := parseConf(args.StdinData)
	if err != nil {
		return nil, err
	}
	res, err := prevResult(conf)
	if err != nil {
		return nil, err
	}
	pod, err := parsePodArgs(args.Args)
	if err != nil {
		return nil, err
	}
	api, err := newAPIClient(conf.Kubeconfig)
	if err != nil {
		return nil, err
	}
	ports, err := plan(ctx, api, pod, args)
	if err != nil {
		return nil, err
	}
	o := newOVS(conf)
	for i, pt := range ports {
		hostMAC, err := p.plug(ctx, o, pod, args, pt)
		if err != nil {
			uctx, cancel := undoContext(ctx)
			defer cancel()
			var errs []error
			for _, done := range ports[:i] {
				errs = append(errs, p.unplug(uctx, o, done.host))
			}
			return nil, errors.Join(append([]error{err}, errs...)...)
		}
		res.Interfaces = append(res.Interfaces,
			&types100.Interface{Name: pt.host, Mac: hostMAC, Mtu: pt.MTU},
			&types100.Interface{Name: pt.Interface, Mac: pt.mac.String(), Mtu: pt.MTU, Sandbox: args.Netns})
	}
	out, err := res.GetAsVersion(conf.CNIVersion)
	if err != nil {
		return nil, fmt.Errorf("pod %s: result as CNI %s: %w", pod, conf.CNIVersion, err)
	}
	return out, nil
}

// prevResult is the result of the plugins before this one, or an empty
// one when it runs alone.
func prevResult(c *NetConf) (*types100.Result, error) {
	if c.PrevResult == nil {
		return &types100.Result{CNIVersion: types100.ImplementedSpecVersion}, nil
	}
	r, err := types100.NewResultFromResult(c.PrevResult)
	if err != nil {
		return nil, fmt.Errorf("nqos-cni config %q: prevResult: %w", c.Name, err)
	}
	return r, nil
}

// Del removes every port whose nqos-cni/sandbox is the container ID, and
// its veth. It needs neither the API nor the sandbox's namespace, and
// succeeds when there is nothing to remove.
func (p Plugin) Del(ctx context.Context, args *skel.CmdArgs) error {
	conf, err := parseConf(args.StdinData)
	if err != nil {
		return err
	}
	o := newOVS(conf)
	names, err := o.portsOf(ctx, args.ContainerID)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		errs = append(errs, p.unplug(ctx, o, n))
	}
	return errors.Join(errs...)
}

// Check verifies that every network of the pod's annotation is plugged:
// the node end on the bridge with its ofport and external_ids, the pod end
// in the sandbox with its MAC and MTU, up.
func (p Plugin) Check(ctx context.Context, args *skel.CmdArgs) error {
	conf, err := parseConf(args.StdinData)
	if err != nil {
		return err
	}
	pod, err := parsePodArgs(args.Args)
	if err != nil {
		return err
	}
	api, err := newAPIClient(conf.Kubeconfig)
	if err != nil {
		return err
	}
	ports, err := plan(ctx, api, pod, args)
	if err != nil {
		return err
	}
	o := newOVS(conf)
	for _, pt := range ports {
		if err := p.check(ctx, o, args, pt); err != nil {
			return fmt.Errorf("pod %s: interface %s (NAD %s): %w", pod, pt.Interface, pt.NAD(), err)
		}
	}
	return nil
}
