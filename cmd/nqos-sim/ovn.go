package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/nqos/nqos/internal/ovninstall"
)

// ovnFlag registers --ovn on fs; its default is the version NQOS_OVN
// selects (23.03 when unset).
func ovnFlag(fs *flag.FlagSet) *string {
	def := string(ovninstall.Default)
	if v, err := ovninstall.Selected(); err == nil {
		def = string(v)
	}
	return fs.String("ovn", def, "OVN version the testbed runs: 23.03 (Debian 12 packages) or 25.03 (hack/ovn-root.sh 25.03); default $"+ovninstall.EnvVar+" or 23.03")
}

// useOVN makes this process, and every daemon and command it starts, run
// OVN version: its wrappers first on PATH and NQOS_OVN set. It prints the
// release the binaries report.
func useOVN(ctx context.Context, version string) error {
	v, err := ovninstall.ParseVersion(version)
	if err != nil {
		return fmt.Errorf("--ovn: %w", err)
	}
	inst, err := ovninstall.Resolve(v)
	if err != nil {
		return fmt.Errorf("--ovn: %w", err)
	}
	if err := inst.Activate(); err != nil {
		return fmt.Errorf("--ovn %s: %w", v, err)
	}
	_, release, err := ovninstall.Current(ctx)
	if err != nil {
		return fmt.Errorf("--ovn %s: %w", v, err)
	}
	fmt.Fprintf(os.Stderr, "OVN %s (%s)\n", release, ovnWhere(inst))
	return nil
}

func ovnWhere(inst ovninstall.Install) string {
	if inst.BinDir == "" {
		return "the host's packages"
	}
	return inst.BinDir
}
