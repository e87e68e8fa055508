package capture

import "time"

// Window is one bin of a rate time series.
type Window struct {
	Start   time.Time
	Packets uint64
	Bytes   uint64 // frame bytes
}

// BitsPerSecond returns the window's rate for a window of the given size.
func (w Window) BitsPerSecond(size time.Duration) float64 {
	return float64(w.Bytes) * 8 / size.Seconds()
}

// Series is a fixed-size-window rate time series aligned to an origin.
type Series struct {
	Size    time.Duration
	Origin  time.Time
	Windows []Window
}

func newSeries(size time.Duration, origin time.Time) *Series {
	return &Series{Size: size, Origin: origin}
}

// add counts one frame at ts; frames before the origin are not binned.
func (s *Series) add(ts time.Time, bytes int) {
	d := ts.Sub(s.Origin)
	if d < 0 {
		return
	}
	idx := int(d / s.Size)
	for len(s.Windows) <= idx {
		s.Windows = append(s.Windows, Window{Start: s.Origin.Add(time.Duration(len(s.Windows)) * s.Size)})
	}
	w := &s.Windows[idx]
	w.Packets++
	w.Bytes += uint64(bytes)
}

// MaxBytes returns the largest byte count of any window.
func (s *Series) MaxBytes() uint64 {
	var m uint64
	for _, w := range s.Windows {
		m = max(m, w.Bytes)
	}
	return m
}
