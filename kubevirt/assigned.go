package kubevirt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/poll"
)

// assignAddrs gives every attachment on a network with subnets the
// addresses its pod got (lspWriter.assigned), before the guest is
// configured.
func (m *Manager) assignAddrs(ctx context.Context, in *instance) error {
	for i := range in.atts {
		if len(in.atts[i].Subnets) == 0 {
			continue
		}
		if err := m.lsps.assigned(ctx, m, in, i); err != nil {
			return err
		}
	}
	return nil
}

// assigned waits until ovnkube has allocated attachment i's addresses:
// the pod's k8s.ovn.org/pod-networks entry for the NAD names them with
// the MAC the networks annotation asked for, and the LSP in the NB of the
// pod's node's zone carries exactly that MAC and those IPs (its
// port_security lets nothing else out). The attachment then takes them
// in place of its static addresses: the guest is configured with what
// the pod got.
func (ovnkubeLSPs) assigned(ctx context.Context, m *Manager, in *instance, i int) error {
	a := &in.atts[i]
	nad := a.NADNamespace + "/" + a.NADName
	if m.kube == nil {
		return fmt.Errorf("VM %s/%s: NAD %s has subnets: ovnkube's addresses are read from the pod, but no Kubernetes API is attached", in.vm.Namespace, in.vm.Name, nad)
	}
	lsp := in.lsps[i]
	var got PodAddrs
	what := fmt.Sprintf("ovnkube's addresses of pod %s/%s on NAD %s and on LSP %s", in.vm.Namespace, in.pod, nad, lsp)
	err := poll.Until(ctx, ovnkubeLSPTimeout, 100*time.Millisecond, what, func(ctx context.Context) (bool, error) {
		pod, err := m.kube.CoreV1().Pods(in.vm.Namespace).Get(ctx, in.pod, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("read pod: %w", err)
		}
		got, err = ParsePodNetworks(pod.Annotations[PodNetworksAnnotation], nad)
		if errors.Is(err, ErrNoPodNetwork) {
			return false, poll.Retry("%v", err)
		}
		if err != nil {
			return false, err
		}
		if !strings.EqualFold(got.MAC, a.MAC) {
			return false, fmt.Errorf("%s gives MAC %s, the networks annotation asks %s", PodNetworksAnnotation, got.MAC, a.MAC)
		}
		out, err := m.tb.NodeNBCtl(ctx, in.node, "--bare", "--columns=addresses", "find", "Logical_Switch_Port", "name="+lsp)
		if err != nil {
			return false, err
		}
		if col := strings.TrimSpace(out); !lspAddrsMatch(col, got) {
			return false, poll.Retry("LSP addresses %q, pod-networks %s %v", col, got.MAC, got.IPs())
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("VM %s/%s: %w", in.vm.Namespace, in.vm.Name, err)
	}
	a.IPv4, a.IPv6 = got.IPv4, got.IPv6
	return nil
}
