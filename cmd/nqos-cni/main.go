// Command nqos-cni is the chained CNI plugin of package internal/cni: it
// plugs a pod's OVN-Kubernetes localnet secondary interfaces into OVS
// br-int (installed by nqos-kind up on every KinD node, after bridge and
// portmap in the conflist).
package main

import (
	"context"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/nqos/nqos/internal/cni"
)

// timeout bounds one CNI command (the API reads and every ovs-vsctl).
const timeout = 90 * time.Second

func main() {
	p := cni.Plugin{}
	withTimeout := func(f func(context.Context, *skel.CmdArgs) error) func(*skel.CmdArgs) error {
		return func(args *skel.CmdArgs) error {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return f(ctx, args)
		}
	}
	skel.PluginMainFuncs(skel.CNIFuncs{
		Add: withTimeout(func(ctx context.Context, args *skel.CmdArgs) error {
			r, err := p.Add(ctx, args)
			if err != nil {
				return err
			}
			return r.Print()
		}),
		Del:   withTimeout(p.Del),
		Check: withTimeout(p.Check),
	}, version.PluginSupports("1.0.0"), "nqos-cni: plugs OVN-Kubernetes localnet secondary interfaces into br-int")
}
