package localnet

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nqos/nqos/internal/poll"
)

// createNetwork adds the network's logical switch and localnet port, as
// ovnkube's localnet controller names and tags them.
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
	_, err := t.NBCtl(ctx, args...)
	return err
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

// WaitChassis waits until every node registered its chassis in the SB.
func (t *Testbed) WaitChassis(ctx context.Context) error {
	if t.st.Spec.Kind != nil {
		return t.waitKindChassis(ctx)
	}
	return poll.Until(ctx, 30*time.Second, pollEvery, fmt.Sprintf("%d chassis in the SB", len(t.st.Nodes)), func(ctx context.Context) (bool, error) {
		out, err := t.SBCtl(ctx, "--format=json", "--columns=name", "list", "Chassis")
		if err != nil {
			return false, err
		}
		tb, err := decodeTable(out, "SB Chassis")
		return err == nil && len(tb.Data) == len(t.st.Nodes), err
	})
}

// WaitHVSync waits until every chassis has processed the current NB
// contents (nb_cfg reached hv_cfg): flows for every NB change before the
// call are installed.
func (t *Testbed) WaitHVSync(ctx context.Context) error {
	timeout := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	_, err := t.NBCtl(ctx, "--timeout="+strconv.Itoa(max(1, int(timeout.Seconds()))), "--wait=hv", "sync")
	if err != nil {
		return fmt.Errorf("waiting for hv_cfg to reach nb_cfg: %w", err)
	}
	return nil
}

// WaitPortUp waits until the LSP is bound and reported up.
func (t *Testbed) WaitPortUp(ctx context.Context, lsp string) error {
	return poll.Until(ctx, 30*time.Second, pollEvery, "LSP "+lsp+" up", func(ctx context.Context) (bool, error) {
		out, err := t.NBCtl(ctx, "--format=json", "--columns=up", "find", "Logical_Switch_Port", "name="+lsp)
		if err != nil {
			return false, err
		}
		tb, err := decodeTable(out, "LSP "+lsp)
		if err != nil || len(tb.Data) != 1 {
			return false, err
		}
		return string(tb.column("up")[0]) == "true", nil
	})
}
