package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// adoptEarlier moves the rows earlier nqos versions wrote under
// OVN-Kubernetes's controller name to nqos's own key (ovnnb's
// AdoptEarlierRows): the rows provably nqos's always, and every
// earlier-key NetworkQoS row of a user-defined network only when
// OVN-Kubernetes's NetworkQoS does not run (otherwise they are its own).
func (c *Controller) adoptEarlier(ctx context.Context) error {
	res, err := c.nb.AdoptEarlierRows(ctx, !c.ovnkube)
	c.metrics.nbWrites.Add(float64(res.Transactions))
	if err != nil {
		return fmt.Errorf("adopt earlier rows: %w", err)
	}
	if res.Total() > 0 {
		c.log.Info("adopted rows written under OVN-Kubernetes's controller name", "qos", res.QoS,
			"portGroups", res.PortGroups, "addressSets", res.AddressSets, "ovnkubeNetworkQoS", c.ovnkube)
	}
	return nil
}

// switchesOf are the switches r writes QoS rows to, sorted, unique.
func switchesOf(r qos.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, row := range r.QoS {
		if !seen[row.Switch] {
			seen[row.Switch] = true
			out = append(out, row.Switch)
		}
	}
	return out
}

// foreignOn lists the NetworkQoS rows nqos does not own on the switches
// r writes to. A failed read is an error.
func (c *Controller) foreignOn(ctx context.Context, r qos.Result) ([]ovnnb.ForeignRow, error) {
	sws := switchesOf(r)
	if len(sws) == 0 {
		return nil, nil
	}
	rows, err := c.nb.ForeignNetworkQoS(ctx, sws)
	if err != nil {
		return nil, fmt.Errorf("networkqos %s: %w", r.Key(), err)
	}
	return rows, nil
}

// maxListedForeign bounds the foreign rows named in one message.
const maxListedForeign = 5

// foreignMessage says which foreign NetworkQoS rows share r's switches
// and that nqos leaves them alone; "" when there are none.
func foreignMessage(rows []ovnnb.ForeignRow) string {
	if len(rows) == 0 {
		return ""
	}
	names := make([]string, 0, min(len(rows), maxListedForeign))
	for _, f := range rows[:min(len(rows), maxListedForeign)] {
		names = append(names, f.String())
	}
	msg := fmt.Sprintf("%d NetworkQoS rows of another controller (OVN-Kubernetes's own NetworkQoS?) on the same switches, left as they are: %s",
		len(rows), strings.Join(names, "; "))
	if len(rows) > maxListedForeign {
		msg += fmt.Sprintf(" and %d more", len(rows)-maxListedForeign)
	}
	return msg
}

// logForeign logs, once per startup, the foreign NetworkQoS rows on the
// switches nqos writes to: where OVN-Kubernetes's NetworkQoS is said to
// be off, they show it is on.
func (c *Controller) logForeign(ctx context.Context, rs []qos.Result) error {
	seen := map[string]bool{}
	var sws []string
	for _, r := range rs {
		for _, sw := range switchesOf(r) {
			if !seen[sw] {
				seen[sw] = true
				sws = append(sws, sw)
			}
		}
	}
	if len(sws) == 0 {
		return nil
	}
	rows, err := c.nb.ForeignNetworkQoS(ctx, sws)
	if err != nil {
		return fmt.Errorf("startup: %w", err)
	}
	if len(rows) > 0 {
		c.log.Warn("foreign NetworkQoS rows on switches nqos writes to; nqos never changes them",
			"rows", len(rows), "first", rows[0].String(), "ovnkubeNetworkQoS", c.ovnkube)
	}
	return nil
}
