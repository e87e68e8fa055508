package localnet

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/poll"
)

// createNetwork adds the network's logical switch and localnet port to
// every zone, as ovnkube's localnet controller names and tags them (each
// zone's switch holds that zone's ports; traffic between zones crosses
// the fabric through the localnet ports).
func (t *Testbed) createNetwork(ctx context.Context, n Network) error {
	port := n.LocalnetPort()
	args := []string{
		"--", "--may-exist", "ls-add", n.Switch,
		"--", "set", "Logical_Switch", n.Switch, "external_ids:k8s.ovn.org/network=" + n.Name,
		"external_ids:k8s.ovn.org/topology=localnet",
		"--", "--may-exist", "lsp-add", n.Switch, port,
		"--", "lsp-set-type", port, "localnet",
		"--", "lsp-set-addresses", port, "unknown",
		"--", "lsp-set-options", port, "network_name=" + n.PhysicalNetworkName,
		"--", "set", "Logical_Switch_Port", port, "external_ids:k8s.ovn.org/network=" + n.Name,
		"external_ids:k8s.ovn.org/topology=localnet",
	}
	if n.VLAN > 0 {
		args = append(args, "--", "set", "Logical_Switch_Port", port, "tag="+strconv.Itoa(n.VLAN))
	}
	for _, z := range t.Zones() {
		if _, err := t.ZoneNBCtl(ctx, z, args...); err != nil {
			return err
		}
	}
	return nil
}

// nbTable is `ovn-nbctl --format=json list` output.
type nbTable struct {
	Headings []string            `json:"headings"`
	Data     [][]json.RawMessage `json:"data"`
}

// column returns the named column of every row.
func (tb nbTable) column(name string) []json.RawMessage {
	for i, h := range tb.Headings {
		if h == name {
			out := make([]json.RawMessage, 0, len(tb.Data))
			for _, row := range tb.Data {
				out = append(out, row[i])
			}
			return out
		}
	}
	return nil
}

func decodeTable(out, what string) (nbTable, error) {
	var tb nbTable
	if err := json.Unmarshal([]byte(out), &tb); err != nil {
		return tb, fmt.Errorf("decode %s: %w", what, err)
	}
	return tb, nil
}

// WaitChassis waits until every node registered its chassis in the SB
// of its zone.
func (t *Testbed) WaitChassis(ctx context.Context) error { return t.cluster().waitChassis(ctx) }

// WaitHVSync waits until every chassis has processed the current NB
// contents of its zone (nb_cfg reached hv_cfg in every zone): flows for
// every NB change before the call are installed.
func (t *Testbed) WaitHVSync(ctx context.Context) error {
	timeout := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	for _, z := range t.Zones() {
		_, err := t.ZoneNBCtl(ctx, z, "--timeout="+strconv.Itoa(max(1, int(timeout.Seconds()))), "--wait=hv", "sync")
		if err != nil {
			return fmt.Errorf("waiting for hv_cfg to reach nb_cfg: %w", err)
		}
	}
	return nil
}

// WaitPortUp waits until the LSP is bound and reported up in the zone
// that holds it (LSP names are unique across zones).
func (t *Testbed) WaitPortUp(ctx context.Context, lsp string) error {
	return poll.Until(ctx, 30*time.Second, pollEvery, "LSP "+lsp+" up", func(ctx context.Context) (bool, error) {
		for _, z := range t.Zones() {
			out, err := t.ZoneNBCtl(ctx, z, "--format=json", "--columns=up", "find", "Logical_Switch_Port", "name="+lsp)
			if err != nil {
				return false, err
			}
			tb, err := decodeTable(out, "LSP "+lsp)
			if err != nil {
				return false, err
			}
			if len(tb.Data) == 1 {
				return string(tb.column("up")[0]) == "true", nil
			}
		}
		return false, nil
	})
}

// ZoneOfPort is the zone whose NB holds the LSP; exactly one must.
func (t *Testbed) ZoneOfPort(ctx context.Context, lsp string) (Zone, error) {
	var found []Zone
	for _, z := range t.Zones() {
		out, err := t.ZoneNBCtl(ctx, z, "--bare", "--columns=name", "find", "Logical_Switch_Port", "name="+lsp)
		if err != nil {
			return Zone{}, err
		}
		if strings.TrimSpace(out) != "" {
			found = append(found, z)
		}
	}
	if len(found) != 1 {
		return Zone{}, fmt.Errorf("testbed %s: LSP %s is in %d zones, want 1", t.st.RunID, lsp, len(found))
	}
	return found[0], nil
}
