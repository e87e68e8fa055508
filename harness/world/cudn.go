package world

import (
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/internal/qos"
)

// renderCUDNs adds to in the NADs its ClusterUserDefinedNetworks render
// into its Namespaces, as ovnkube's CUDN controller (and the testbed) put
// them in the cluster: without them the compiler sees no network behind
// a CUDN and the intent leg would say "unmarked".
func renderCUDNs(in *qos.Input) error {
	labels := make(map[string]map[string]string, len(in.Namespaces))
	for _, ns := range in.Namespaces {
		labels[ns.Name] = ns.Labels
	}
	for _, c := range in.CUDNs {
		nads, err := udnv1.RenderNADs(c, labels)
		if err != nil {
			return err
		}
		in.NADs = append(in.NADs, nads...)
	}
	return nil
}
