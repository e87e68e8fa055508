package localnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/poll"
)

// ovnkubeNetworkTimeout bounds the wait for ovnkube to create a network's
// localnet switch and port after its NAD appears, and to remove them
// after its NADs are deleted.
const ovnkubeNetworkTimeout = time.Minute

// waitOVNKubeNetworks waits until ovnkube has made every network's
// localnet switch and localnet port from its NADs, and checks the port's
// type, network_name and VLAN against the network.
func (t *Testbed) waitOVNKubeNetworks(ctx context.Context) error {
	for _, n := range t.st.Spec.Networks {
		what := fmt.Sprintf("ovnkube's localnet port %s on switch %s", n.LocalnetPort(), n.Switch)
		err := poll.Until(ctx, ovnkubeNetworkTimeout, pollEvery, what, func(ctx context.Context) (bool, error) {
			for _, z := range t.Zones() {
				if ok, err := t.checkOVNKubeNetwork(ctx, z, n); !ok || err != nil {
					return false, err
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("testbed %s: network %s: %w", t.st.RunID, n.Name, err)
		}
	}
	return nil
}

// checkOVNKubeNetwork reports whether the network's switch in zone z holds
// its localnet port (each zone's ovnkube controller makes its own); a port
// unlike the network is an error.
func (t *Testbed) checkOVNKubeNetwork(ctx context.Context, z Zone, n Network) (bool, error) {
	port := n.LocalnetPort()
	ports, err := t.ZoneNBCtl(ctx, z, "--bare", "--columns=ports", "find", "Logical_Switch", "name="+n.Switch)
	if err != nil || strings.TrimSpace(ports) == "" {
		return false, err
	}
	out, err := t.ZoneNBCtl(ctx, z, "--format=json", "--columns=type,options,tag_request", "find", "Logical_Switch_Port", "name="+port)
	if err != nil {
		return false, err
	}
	tb, err := decodeTable(out, "NB Logical_Switch_Port "+port)
	if err != nil || len(tb.Data) == 0 {
		return false, err
	}
	var typ string
	if err := json.Unmarshal(tb.column("type")[0], &typ); err != nil {
		return false, fmt.Errorf("port %s: type: %w", port, err)
	}
	opts, err := ovsMap(tb.column("options")[0])
	if err != nil {
		return false, fmt.Errorf("port %s: %w", port, err)
	}
	tag := string(tb.column("tag_request")[0])
	wantTag := `["set",[]]`
	if n.VLAN > 0 {
		wantTag = strconv.Itoa(n.VLAN)
	}
	if typ != "localnet" || opts["network_name"] != n.PhysicalNetworkName || tag != wantTag {
		return false, fmt.Errorf("port %s: type %q network_name %q tag_request %s, want localnet %q %s",
			port, typ, opts["network_name"], tag, n.PhysicalNetworkName, wantTag)
	}
	return true, nil
}

// removeOVNKubeNetworks deletes the networks' NADs and CUDNs from the API
// (what is gone already is no error) and waits until ovnkube has removed
// their localnet switches from the NB.
func (t *Testbed) removeOVNKubeNetworks(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(t.RESTConfig())
	if err != nil {
		return fmt.Errorf("testbed %s: kube client: %w", t.st.RunID, err)
	}
	var errs []error
	for _, n := range t.st.Spec.Networks {
		for _, nad := range n.NADObjects {
			err := dyn.Resource(nadv1.GroupVersionResource()).Namespace(nad.Namespace).Delete(ctx, nad.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("testbed %s: delete NAD %s/%s: %w", t.st.RunID, nad.Namespace, nad.Name, err))
			}
		}
		if n.CUDN != nil {
			err := dyn.Resource(udnv1.GroupVersionResource()).Delete(ctx, n.CUDN.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("testbed %s: delete ClusterUserDefinedNetwork %s: %w", t.st.RunID, n.CUDN.Name, err))
			}
		}
	}
	for _, n := range t.st.Spec.Networks {
		err := poll.Until(ctx, ovnkubeNetworkTimeout, pollEvery, "ovnkube to remove switch "+n.Switch, func(ctx context.Context) (bool, error) {
			for _, z := range t.Zones() {
				out, err := t.ZoneNBCtl(ctx, z, "--bare", "--columns=name", "find", "Logical_Switch", "name="+n.Switch)
				if err != nil || strings.TrimSpace(out) != "" {
					return false, err
				}
			}
			return true, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("testbed %s: network %s: %w", t.st.RunID, n.Name, err))
		}
	}
	return errors.Join(errs...)
}
