package netns

import (
	"net/netip"
	"testing"
)

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"0200630A:14E9":                         "10.99.0.2:5353",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"000099FD000000000000000002000000:0050": "[fd99::2]:80",
	} {
		got, err := parseProcAddr(in)
		if err != nil || got != netip.MustParseAddrPort(want) {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "zz00007F:0050", "0100007F:xyz", "01007F:0050"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q) accepted", bad)
		}
	}
}
