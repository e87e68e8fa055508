package localnetenv

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/results"
)

var _ harness.ZoneControl = (*testbedEnv)(nil)

// zoneProc is the controller process of node's zone (interconnect).
func (e *testbedEnv) zoneProc(node int) (*controllerProc, string, error) {
	name := e.nodeName(node)
	for _, z := range e.zones {
		if !z.zone.Has(name) {
			continue
		}
		if p, ok := e.plane.(*zonePlane); ok {
			if proc, ok := p.process(z.zone.Name); ok {
				return proc, z.zone.Name, nil
			}
		}
		return nil, "", fmt.Errorf("zone %s: no zone controller process (topology %s)", z.zone.Name, e.tb.Topology())
	}
	return nil, "", fmt.Errorf("node %d (%s): no zone holds it", node, name)
}

// StopZoneController stops the controller of node's zone and leaves it
// stopped; the other zones' controllers and the aggregator keep running.
func (e *testbedEnv) StopZoneController(ctx context.Context, node int, mode string) ([]results.Measure, error) {
	proc, zone, err := e.zoneProc(node)
	if err != nil {
		return nil, err
	}
	if proc.cur == nil || !proc.cur.Running() {
		return nil, fmt.Errorf("zone %s: its controller is not running", zone)
	}
	from := time.Now()
	if err := stopController(ctx, proc.cur, stopMode(mode)); err != nil {
		return nil, fmt.Errorf("zone %s: %w", zone, err)
	}
	proc.cur = nil
	return []results.Measure{{Name: fmt.Sprintf("zone %s controller stopped (%s): signal -> exit", zone, mode), Duration: time.Since(from)}}, nil
}

// StartZoneController starts the stopped controller of node's zone and
// waits until it is synced and every zone's rows equal the compiler's.
func (e *testbedEnv) StartZoneController(ctx context.Context, node int) (harness.ZoneStart, error) {
	proc, zone, err := e.zoneProc(node)
	if err != nil {
		return harness.ZoneStart{}, err
	}
	if proc.cur != nil && proc.cur.Running() {
		return harness.ZoneStart{}, fmt.Errorf("zone %s: its controller already runs (pid %d)", zone, proc.cur.Pid())
	}
	if err := proc.start(ctx); err != nil {
		return harness.ZoneStart{}, fmt.Errorf("zone %s: %w", zone, err)
	}
	cur := proc.cur
	conv, err := e.converge(ctx)
	if err != nil {
		return harness.ZoneStart{}, err
	}
	out := harness.ZoneStart{Measures: []results.Measure{
		{Name: fmt.Sprintf("zone %s controller start -> synced", zone), Duration: cur.SyncedAt().Sub(cur.Started())},
	}, Divergence: conv.divergence()}
	if conv.at.IsZero() {
		return out, nil
	}
	out.Measures = append(out.Measures, results.Measure{Name: "synced -> every zone's rows equal the compiler's", Duration: max(conv.at.Sub(cur.SyncedAt()), 0)})
	return out, nil
}

// AggregateStatus is a NetworkQoS's status.status ("" for a missing
// object or an unset status).
func (e *testbedEnv) AggregateStatus(ctx context.Context, namespace, name string) (string, error) {
	u, found, err := e.networkQoS(ctx, namespace, name)
	if !found {
		return "", err
	}
	s, _, err := unstructured.NestedString(u.Object, "status", "status")
	if err != nil {
		return "", fmt.Errorf("NetworkQoS %s/%s: status.status: %w", namespace, name, err)
	}
	return s, nil
}
