package coexist

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The deployed controller (config/deploy/deployment-central.yaml).
const (
	controllerNS    = "nqos-system"
	controllerName  = "nqos-controller"
	controllerLease = "nqos-controller"
)

// RestartController restarts the deployed nqos controller (a rollout
// restart) and waits, at most timeout, until the rollout is done and a
// new pod, Ready (its startup sync and GC done), holds the Lease. It
// returns the new holder.
func RestartController(ctx context.Context, n Node, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kubectl := func(args ...string) (string, error) {
		out, err := n.Run(ctx, append([]string{"kubectl", "--kubeconfig=" + adminConfig, "-n", controllerNS}, args...)...)
		return strings.TrimSpace(out), err
	}
	old, err := kubectl("get", "lease", controllerLease, "-o", "jsonpath={.spec.holderIdentity}")
	if err != nil {
		return "", fmt.Errorf("lease %s/%s: %w", controllerNS, controllerLease, err)
	}
	if _, err := kubectl("rollout", "restart", "deployment/"+controllerName); err != nil {
		return "", fmt.Errorf("restart deployment %s/%s: %w", controllerNS, controllerName, err)
	}
	if _, err := kubectl("rollout", "status", "deployment/"+controllerName, "--timeout="+timeout.String()); err != nil {
		return "", fmt.Errorf("rollout of deployment %s/%s: %w", controllerNS, controllerName, err)
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		holder, err := kubectl("get", "lease", controllerLease, "-o", "jsonpath={.spec.holderIdentity}")
		if err != nil {
			return "", fmt.Errorf("lease %s/%s: %w", controllerNS, controllerLease, err)
		}
		if holder != "" && holder != old {
			ready, err := kubectl("get", "pod", holder, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			if err != nil {
				return "", fmt.Errorf("pod %s/%s: %w", controllerNS, holder, err)
			}
			if ready == "True" {
				return holder, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("lease %s/%s: held by %q (was %q), no new Ready holder within %s", controllerNS, controllerLease, holder, old, timeout)
		case <-t.C:
		}
	}
}
