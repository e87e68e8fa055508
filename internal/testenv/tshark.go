package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// TsharkCount is how many frames of the pcap file at path tshark's
// display filter selects (every frame for ""): an independent reader to
// check the module's own pcap writer and analysis against. It requires
// tshark (Binaries) and fails the test when tshark fails.
func TsharkCount(t testing.TB, path, filter string) int {
	t.Helper()
	Binaries(t, "tshark")
	args := []string{"-n", "-r", path, "-T", "fields", "-e", "frame.number"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return 0
	}
	return len(strings.Split(s, "\n"))
}
