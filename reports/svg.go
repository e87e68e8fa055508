package reports

import (
	"fmt"
	"github.com/nqos/nqos/harness/results"
	"html"
	"html/template"
	"math"
	"strings"
	"time"
)

// Chart geometry (pixels).
const (
	chartW, chartH = 420, 200
	padL, padR     = 56, 12
	padT, padB     = 14, 34
)

type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

func (b *svgBuf) open(class, title string) {
	b.f(`<svg class="chart %s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img"><title>%s</title>`,
		class, chartW, chartH, chartW, chartH, html.EscapeString(title))
	b.f(`<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>`, padL, padT, chartW-padL-padR, chartH-padT-padB)
}

func (b *svgBuf) text(x, y float64, anchor, class, s string) {
	b.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, html.EscapeString(s))
}

// DSCPChart draws the flow's DSCP histogram as bars, the expected DSCP
// (when one was expected) highlighted.
func DSCPChart(f results.Flow) template.HTML {
	var b svgBuf
	b.open("dscp", "DSCP histogram of "+f.Name+"/"+f.Family)
	var peak uint64
	for _, c := range f.DSCP {
		peak = max(peak, c.Packets)
	}
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	if peak == 0 {
		b.text(float64(padL)+plotW/2, float64(padT)+plotH/2, "middle", "empty", "no packets captured")
	}
	slot := plotW / float64(max(len(f.DSCP), 1))
	for i, c := range f.DSCP {
		h := plotH * float64(c.Packets) / float64(max(peak, 1))
		x := float64(padL) + slot*float64(i) + slot*0.15
		class := "bar"
		if expectedDSCP(f, c.DSCP) {
			class = "bar expected"
		}
		b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="%s"><title>DSCP %d: %d packets</title></rect>`,
			x, float64(padT)+plotH-h, slot*0.7, h, class, c.DSCP, c.Packets)
		b.text(x+slot*0.35, float64(chartH-padB+14), "middle", "tick", fmt.Sprintf("%d", c.DSCP))
		b.text(x+slot*0.35, float64(padT)+plotH-h-3, "middle", "value", fmt.Sprintf("%d", c.Packets))
	}
	b.text(float64(padL)+plotW/2, float64(chartH-4), "middle", "axis", "DSCP value")
	b.text(12, float64(padT)+plotH/2, "middle", "axis vertical", "packets")
	b.f(`</svg>`)
	return template.HTML(b.String())
}

// expectedDSCP reports whether the flow expected this DSCP value.
func expectedDSCP(f results.Flow, dscp int) bool {
	if f.WantDSCP != nil {
		return *f.WantDSCP == dscp
	}
	return f.WantUnmarked && dscp == 0
}

// RateChart draws the flow's rate over time against the offered rate, the
// policer's configured rate and the token-bucket bound over one window,
// rate + burst/T (from bits <= rate·T + burst).
func RateChart(f results.Flow) template.HTML {
	var b svgBuf
	b.open("rate", "Rate over time of "+f.Name+"/"+f.Family)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	top := f.OfferedBps
	var bound float64
	if f.Policer != nil && f.RateWindow > 0 {
		bound = f.Policer.RateBps + f.Policer.BurstBits/f.RateWindow.Seconds()
		top = math.Max(top, bound)
	}
	for _, r := range f.Rate {
		top = math.Max(top, r)
	}
	top = niceCeil(top)
	n := len(f.Rate)
	x := func(i float64) float64 { return float64(padL) + plotW*i/math.Max(float64(n), 1) }
	y := func(v float64) float64 { return float64(padT) + plotH*(1-v/top) }
	for _, frac := range []float64{0, 0.25, 0.5, 0.75, 1} {
		v := top * frac
		b.f(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, y(v), y(v))
		b.text(float64(padL-4), y(v)+4, "end", "tick", shortRate(v))
	}
	hline := func(v float64, class, label string) {
		b.f(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="%s"/>`, padL, chartW-padR, y(v), y(v), class)
		b.text(float64(chartW-padR-4), y(v)-5, "end", "label "+class, label)
	}
	if f.OfferedBps > 0 {
		hline(f.OfferedBps, "offered", "offered "+shortRate(f.OfferedBps))
	}
	if f.Policer != nil {
		hline(f.Policer.RateBps, "policed", "rate "+shortRate(f.Policer.RateBps))
		if bound > 0 {
			hline(bound, "bound", fmt.Sprintf("rate·T+burst, T=%s", f.RateWindow))
		}
	}
	if n == 0 {
		b.text(float64(padL)+plotW/2, float64(padT)+plotH/2, "middle", "empty", "no rate samples")
	}
	var pts []string
	for i, r := range f.Rate {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(i)), y(r), x(float64(i+1)), y(r)))
	}
	if len(pts) > 0 {
		b.f(`<polyline points="%s" class="measured"/>`, strings.Join(pts, " "))
	}
	b.text(float64(padL), float64(chartH-padB+14), "start", "tick", "0 s")
	b.text(float64(chartW-padR), float64(chartH-padB+14), "end", "tick", (time.Duration(n) * f.RateWindow).String())
	b.text(float64(padL)+plotW/2, float64(chartH-4), "middle", "axis", fmt.Sprintf("time (windows of %s)", f.RateWindow))
	b.f(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func shortRate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}
