package bitrate

import "testing"

func TestFormat(t *testing.T) {
	for bps, want := range map[float64]string{
		0:         "0 bit/s",
		999.6:     "1000 bit/s",
		64e3:      "64 kbit/s",
		1234.5:    "1.23 kbit/s",
		97.3e6:    "97.3 Mbit/s",
		99.996e6:  "100 Mbit/s",
		1.5e9:     "1.5 Gbit/s",
		250e6 / 3: "83.33 Mbit/s",
	} {
		if got := Format(bps); got != want {
			t.Errorf("Format(%v) = %q, want %q", bps, got, want)
		}
	}
}
