// Package bitrate owns how the module writes a rate in bits per second for
// people: an SI suffix and at most two decimals (97.3 Mbit/s). It is a
// leaf: the scenario format, the verdicts, the harness and the reports all
// format rates through it.
package bitrate

import "strconv"

// Format formats bits per second with an SI suffix, e.g. 97.3 Mbit/s.
func Format(bps float64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'f', -1, 64) + " Gbit/s"
	case bps >= 1e6:
		return strconv.FormatFloat(round(bps/1e6, 2), 'f', -1, 64) + " Mbit/s"
	case bps >= 1e3:
		return strconv.FormatFloat(round(bps/1e3, 2), 'f', -1, 64) + " kbit/s"
	}
	return strconv.FormatFloat(round(bps, 0), 'f', -1, 64) + " bit/s"
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}
