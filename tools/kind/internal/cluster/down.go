package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Down deletes the named cluster and its kubeconfig file (kubeconfig may be
// empty: then kind only removes the cluster from $KUBECONFIG's default).
func Down(ctx context.Context, name, kubeconfig string) error {
	if !strings.HasPrefix(name, NamePrefix) {
		return fmt.Errorf("cluster name %q: not an nqos cluster (%s<runid>)", name, NamePrefix)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete cluster %s: %w", name, err)
	}
	if err := newProvider().Delete(name, kubeconfig); err != nil {
		return fmt.Errorf("delete cluster %s: %w", name, err)
	}
	return nil
}

// DownAll deletes every cluster whose name starts with NamePrefix and
// prints each name it deleted.
func DownAll(ctx context.Context, out io.Writer) error {
	names, err := newProvider().List()
	if err != nil {
		return fmt.Errorf("list kind clusters: %w", err)
	}
	var errs []error
	for _, n := range names {
		if !strings.HasPrefix(n, NamePrefix) {
			continue
		}
		if err := Down(ctx, n, ""); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "deleted cluster %s\n", n)
	}
	return errors.Join(errs...)
}
