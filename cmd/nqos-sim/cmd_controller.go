package main

import (
	"context"
	"os"

	"github.com/nqos/nqos/internal/controller/app"
)

// runController is `nqos-sim controller`: the same program as
// nqos-controller (flags, leader election, probes, shutdown).
func runController(ctx context.Context, args []string) error {
	return app.RunArgs(ctx, args, os.Stderr)
}
