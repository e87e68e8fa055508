package live_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/capture/live"
)

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		opts live.Options
		want string
	}{
		{"no interface", live.Options{PcapPath: filepath.Join(dir, "a.pcap")}, "fields Interface and PcapPath are required"},
		{"missing interface", live.Options{Interface: "nqos-c1-nope", PcapPath: filepath.Join(dir, "b.pcap")}, "nqos-c1-nope"},
		{"missing netns", live.Options{Netns: "nqos-c1-absent", Interface: "eth0", PcapPath: filepath.Join(dir, "c.pcap")}, "nqos-c1-absent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp, err := live.Start(context.Background(), c.opts)
			if err == nil {
				cp.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %q", err, c.want)
			}
		})
	}
}
