package cni

import (
	"context"
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/skel"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/qos"
)

// port is one attachment resolved to the veth that plugs it.
type port struct {
	Attachment
	Network
	host string           // node end, on the bridge
	mac  net.HardwareAddr // pod end
	lsp  string           // the logical switch port (external_ids:iface-id)
	// podUID is the pod's UID (external_ids:iface-id-ver): ovnkube sets
	// options:iface-id-ver to it on the LSP, and ovn-controller binds the
	// LSP only to an interface carrying the same value.
	podUID string
}

// plan reads the pod and every NAD its networks annotation names and
// resolves each entry to a port; it creates nothing, so an ADD that fails
// here leaves nothing behind. A pod without the annotation has no ports.
func plan(ctx context.Context, api API, pod podRef, args *skel.CmdArgs) ([]port, error) {
	p, err := api.Pod(ctx, pod.Namespace, pod.Name)
	if err != nil {
		return nil, err
	}
	if pod.UID != "" && string(p.UID) != pod.UID {
		return nil, fmt.Errorf("pod %s: UID %s in the API, %s in CNI_ARGS (the pod was recreated)", pod, p.UID, pod.UID)
	}
	atts, err := ParseNetworks(pod.Namespace, p.Annotations[nadv1.NetworksAnnotation], args.IfName)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", pod, err)
	}
	ports := make([]port, 0, len(atts))
	for _, a := range atts {
		nad, err := api.NAD(ctx, a.NADNamespace, a.NADName)
		if err == nil {
			var n Network
			if n, err = ParseNAD(nad); err == nil {
				pt := resolve(a, n, pod, args.ContainerID)
				pt.podUID = string(p.UID)
				ports = append(ports, pt)
				continue
			}
		}
		return nil, fmt.Errorf("pod %s: %s entry %d (%s): %w", pod, nadv1.NetworksAnnotation, a.Index, a.Entry, err)
	}
	return ports, nil
}

// resolve names the veth of an attachment and picks its MAC.
func resolve(a Attachment, n Network, pod podRef, containerID string) port {
	pt := port{Attachment: a, Network: n, host: HostIfName(containerID, a.Interface), mac: a.MAC,
		lsp: qos.LogicalPortName(a.NADNamespace, a.NADName, pod.Namespace, pod.Name)}
	if pt.mac == nil {
		pt.mac = GeneratedMAC(containerID, a.Interface)
	}
	return pt
}
