// Package ovninstall owns which OVN/OVS build the project runs: the
// supported versions, where each one's programs and database schemas are
// (23.03: the host's Debian 12 packages; 25.03: the Debian 13 root that
// hack/ovn-root.sh builds under the user's cache directory), the one
// environment variable that selects a version (NQOS_OVN), and the version
// the programs on PATH report.
//
// A process uses an install by putting its wrapper directory first on
// PATH and naming it in NQOS_OVN (Activate for a command, ForEach for a
// test); code that creates databases takes the schema paths from Current,
// which also checks that the programs on PATH are the selected install's.
package ovninstall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Version is a supported OVN release line, such as "25.03".
type Version string

const (
	// V2303 is Debian 12's OVN 23.03 with OVS 3.1: separate QoS mark and
	// meter stages.
	V2303 Version = "23.03"
	// V2503 is Debian 13's OVN 25.03 with OVS 3.5: one QoS stage.
	V2503 Version = "25.03"
	// Default is the version used when NQOS_OVN is unset.
	Default = V2303
	// EnvVar is the environment variable that selects the version.
	EnvVar = "NQOS_OVN"
)

// Versions lists the supported versions, oldest first.
func Versions() []Version { return []Version{V2303, V2503} }

// Programs are the OVN/OVS programs the project runs; every install has
// each of them.
func Programs() []string {
	return []string{"ovsdb-server", "ovsdb-tool", "ovsdb-client", "ovs-vsctl", "ovs-vswitchd", "ovs-appctl",
		"ovs-ofctl", "ovs-dpctl", "ovn-northd", "ovn-controller", "ovn-nbctl", "ovn-sbctl", "ovn-trace", "ovn-appctl"}
}

// ParseVersion accepts one of Versions.
func ParseVersion(s string) (Version, error) {
	var names []string
	for _, v := range Versions() {
		if s == string(v) {
			return v, nil
		}
		names = append(names, string(v))
	}
	return "", fmt.Errorf("OVN version %q: want one of %s", s, strings.Join(names, ", "))
}

// Selected is the version NQOS_OVN names, Default when it is unset. It is
// the only reader of NQOS_OVN.
func Selected() (Version, error) {
	s := os.Getenv(EnvVar)
	if s == "" {
		return Default, nil
	}
	v, err := ParseVersion(s)
	if err != nil {
		return "", fmt.Errorf("environment %s: %w", EnvVar, err)
	}
	return v, nil
}

// Install is where one version's programs and schemas are.
type Install struct {
	Version Version
	// Root is the filesystem root the programs and schemas live under:
	// "/" for the host's packages.
	Root string
	// BinDir holds one wrapper script per program (Programs) that runs
	// the root's binary with the root's loader and libraries; it goes
	// first on PATH. Empty for the host's packages, found on PATH as
	// installed.
	BinDir string
}

// NBSchema is the OVN Northbound schema file.
func (i Install) NBSchema() string { return filepath.Join(i.Root, "usr/share/ovn/ovn-nb.ovsschema") }

// SBSchema is the OVN Southbound schema file.
func (i Install) SBSchema() string { return filepath.Join(i.Root, "usr/share/ovn/ovn-sb.ovsschema") }

// VSwitchSchema is the Open_vSwitch schema file.
func (i Install) VSwitchSchema() string {
	return filepath.Join(i.Root, "usr/share/openvswitch/vswitch.ovsschema")
}

// CacheDir is the directory hack/ovn-root.sh builds version v into:
// <user cache dir>/nqos/ovn-<v>, holding root/, bin/ and the stamp file
// complete.
func CacheDir(v Version) (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("OVN %s: cache directory: %w", v, err)
	}
	return filepath.Join(c, "nqos", "ovn-"+string(v)), nil
}

// Resolve finds version v's install and checks that it is complete: its
// schemas and, for a built root, its stamp and every wrapper exist.
func Resolve(v Version) (Install, error) {
	if _, err := ParseVersion(string(v)); err != nil {
		return Install{}, err
	}
	inst := Install{Version: v, Root: "/"}
	if v != V2303 {
		dir, err := CacheDir(v)
		if err != nil {
			return Install{}, err
		}
		if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
			return Install{}, fmt.Errorf("OVN %s not installed in %s (run hack/ovn-root.sh %s as root): %w", v, dir, v, err)
		}
		inst.Root, inst.BinDir = filepath.Join(dir, "root"), filepath.Join(dir, "bin")
		for _, p := range Programs() {
			if err := executable(filepath.Join(inst.BinDir, p)); err != nil {
				return Install{}, fmt.Errorf("OVN %s in %s is incomplete: %w", v, dir, err)
			}
		}
	}
	for _, s := range []string{inst.NBSchema(), inst.SBSchema(), inst.VSwitchSchema()} {
		if _, err := os.Stat(s); err != nil {
			return Install{}, fmt.Errorf("OVN %s: schema: %w", v, err)
		}
	}
	return inst, nil
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// SearchPath returns the PATH value (a colon-separated list) that makes
// path's programs this install's: every version's wrapper directory
// removed, then this install's BinDir first.
func (i Install) SearchPath(path string) string {
	others := map[string]bool{}
	for _, v := range Versions() {
		if dir, err := CacheDir(v); err == nil {
			others[filepath.Join(dir, "bin")] = true
		}
	}
	var keep []string
	if i.BinDir != "" {
		keep = append(keep, i.BinDir)
	}
	for _, d := range filepath.SplitList(path) {
		if !others[filepath.Clean(d)] {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// Activate makes this process and the programs it starts use the install:
// PATH as SearchPath and NQOS_OVN naming the version. It is for a
// command's main; tests use ForEach.
func (i Install) Activate() error {
	return errors.Join(os.Setenv("PATH", i.SearchPath(os.Getenv("PATH"))), os.Setenv(EnvVar, string(i.Version)))
}
