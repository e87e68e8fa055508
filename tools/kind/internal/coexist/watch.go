package coexist

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Node runs a command in the cluster's control-plane node (where the
// Northbound's unix socket and the admin kubeconfig are) and returns its
// standard output; a non-zero exit is an error carrying the exit code.
type Node interface {
	Run(ctx context.Context, argv ...string) (string, error)
}

// Paths inside the control-plane node.
const (
	nbSocket    = "unix:/run/ovn/ovnnb_db.sock"
	adminConfig = "/etc/kubernetes/admin.conf"
	// timeoutExpired is timeout(1)'s exit code when it stopped the command.
	timeoutExpired = 124
)

// tables are the monitored tables and their columns.
var tables = [][2]string{
	{"QoS", "external_ids,match,action,priority,bandwidth"},
	{"Port_Group", "external_ids,ports"},
	{"Address_Set", "external_ids,addresses"},
}

// WaitBoth polls until the Northbound holds a NetworkQoS QoS row of each
// controller, at most timeout; a failed read ends the wait with its error.
func WaitBoth(ctx context.Context, n Node, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		out, err := n.Run(ctx, "ovn-nbctl", "--timeout=10", "--bare", "--columns=external_ids", "find", "QoS",
			"external_ids:"+ownerTypeKey+"="+ownerTypeNQoS)
		if err != nil {
			return fmt.Errorf("NetworkQoS QoS rows: %w", err)
		}
		seen := map[Owner]bool{}
		for _, f := range strings.Fields(out) {
			if c, ok := strings.CutPrefix(f, ownerControllerKey+"="); ok {
				o, _ := ownerOf(map[string]string{ownerTypeKey: ownerTypeNQoS, ownerControllerKey: c})
				seen[o] = true
			}
		}
		if seen[OwnerOVNKube] && seen[OwnerNQoS] {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("NetworkQoS QoS rows of both ovnkube and nqos: none of %v after %s", missing(seen), timeout)
		case <-t.C:
		}
	}
}

func missing(seen map[Owner]bool) []Owner {
	var out []Owner
	for _, o := range []Owner{OwnerOVNKube, OwnerNQoS} {
		if !seen[o] {
			out = append(out, o)
		}
	}
	return out
}

// Watch runs the three table monitors and the NetworkQoS watch together
// for d and reduces them. Each must run until the deadline stops it: one
// that ends earlier or cannot connect fails the watch.
func Watch(ctx context.Context, n Node, d time.Duration) (Window, error) {
	secs := strconv.Itoa(int(d.Seconds()))
	type result struct {
		out string
		err error
	}
	cmds := [][]string{}
	for _, t := range tables {
		cmds = append(cmds, []string{"timeout", secs, "ovsdb-client", "--format=json", "--timestamp", "monitor", nbSocket, "OVN_Northbound", t[0], t[1]})
	}
	cmds = append(cmds, []string{"timeout", secs, "kubectl", "--kubeconfig=" + adminConfig, "get", "networkqoses.k8s.ovn.org",
		"-A", "--watch", "--output-watch-events", "-o", "json"})
	res := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, argv := range cmds {
		wg.Go(func() {
			out, err := n.Run(ctx, argv...)
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == timeoutExpired {
				err = nil // stopped by its deadline, as it should be
			} else if err == nil {
				err = fmt.Errorf("%s ended before the %s window did", argv[2], d)
			}
			res[i] = result{out, err}
		})
	}
	wg.Wait()
	var w Window
	var errs []error
	for i, t := range tables {
		if res[i].err != nil {
			errs = append(errs, fmt.Errorf("monitor of %s: %w", t[0], res[i].err))
			continue
		}
		tw, err := ParseMonitor(t[0], res[i].out)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.Tables = append(w.Tables, tw)
	}
	last := res[len(res)-1]
	if last.err != nil {
		errs = append(errs, fmt.Errorf("NetworkQoS watch: %w", last.err))
	} else if s, err := ParseStatusWatch(last.out); err != nil {
		errs = append(errs, err)
	} else {
		w.Status = s
	}
	return w, errors.Join(errs...)
}
