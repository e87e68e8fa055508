package ovninstall

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// versionRE is an OVN release such as "25.03.0" or "24.09.0-rc1".
var versionRE = regexp.MustCompile(`^(\d+)\.(\d+)(\.\d+)?\S*$`)

// ParseProgramVersion reads the release from `<tool> --version` output,
// whose first line is "<tool> 25.03.0".
func ParseProgramVersion(tool, out string) (string, error) {
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	f := strings.Fields(first)
	if len(f) != 2 || f[0] != tool || !versionRE.MatchString(f[1]) {
		return "", fmt.Errorf("%s --version: first line %q is not %q", tool, first, tool+" <major>.<minor>.<patch>")
	}
	return f[1], nil
}

// Detect runs `ovn-northd --version` from PATH and returns the release it
// reports, such as "25.03.0".
func Detect(ctx context.Context) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "ovn-northd", "--version")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ovn-northd --version: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return ParseProgramVersion("ovn-northd", stdout.String())
}

// Current is the install NQOS_OVN selects, checked against what runs:
// each program on PATH is the install's (its wrapper, or for the host's
// packages no other version's wrapper) and ovn-northd reports a release of
// the version. Release is that release, such as "25.03.0".
func Current(ctx context.Context) (inst Install, release string, err error) {
	v, err := Selected()
	if err != nil {
		return Install{}, "", err
	}
	if inst, err = Resolve(v); err != nil {
		return Install{}, "", err
	}
	if err := inst.onPath(); err != nil {
		return Install{}, "", err
	}
	release, err = Detect(ctx)
	if err != nil {
		return Install{}, "", fmt.Errorf("OVN %s: %w", v, err)
	}
	if !strings.HasPrefix(release, string(v)+".") {
		return Install{}, "", fmt.Errorf("OVN %s selected (%s) but ovn-northd on PATH is %s", v, EnvVar, release)
	}
	return inst, release, nil
}

// onPath checks that PATH resolves every program to this install.
func (i Install) onPath() error {
	for _, p := range Programs() {
		got, err := exec.LookPath(p)
		if err != nil {
			return fmt.Errorf("OVN %s: %w", i.Version, err)
		}
		dir := filepath.Dir(got)
		switch {
		case i.BinDir != "" && dir != i.BinDir:
			return fmt.Errorf("OVN %s selected (%s) but %s on PATH is %s: put %s first on PATH", i.Version, EnvVar, p, got, i.BinDir)
		case i.BinDir == "" && i.SearchPath(dir) == "":
			return fmt.Errorf("OVN %s selected (%s) but %s on PATH is %s, another version's: remove %s from PATH", i.Version, EnvVar, p, got, dir)
		}
	}
	return nil
}
