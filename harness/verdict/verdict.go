package verdict

import (
	"encoding/json"
	"fmt"
	"math"
)

// Tolerance is the two-sided slack around a verdict's Want: Got must lie
// in [Want-Below, Want+Above]. An infinite side is unbounded (JSON null).
type Tolerance struct {
	Below, Above float64
}

// upTo is the tolerance of a figure that may not fall below Want and may
// exceed it by at most above.
func upTo(above float64) Tolerance { return Tolerance{Below: 0, Above: above} }

type toleranceJSON struct {
	Below *float64 `json:"below"`
	Above *float64 `json:"above"`
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// MarshalJSON writes an unbounded side as null.
func (t Tolerance) MarshalJSON() ([]byte, error) {
	return json.Marshal(toleranceJSON{Below: finite(t.Below), Above: finite(t.Above)})
}

// UnmarshalJSON reads null as unbounded.
func (t *Tolerance) UnmarshalJSON(b []byte) error {
	var v toleranceJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("tolerance: %w", err)
	}
	t.Below, t.Above = math.Inf(1), math.Inf(1)
	if v.Below != nil {
		t.Below = *v.Below
	}
	if v.Above != nil {
		t.Above = *v.Above
	}
	return nil
}

// Verdict is the outcome of one two-sided check.
type Verdict struct {
	Subject   string    `json:"subject,omitempty"` // flow, meter or VM
	Property  Property  `json:"check"`
	Pass      bool      `json:"pass"`
	Got       float64   `json:"got"`
	Want      float64   `json:"want"`
	Tolerance Tolerance `json:"tolerance"`
	Unit      string    `json:"unit,omitempty"`
	// Samples is how many packets, windows or datagrams Got is made of;
	// a verdict without samples fails.
	Samples int    `json:"samples"`
	Message string `json:"message"`
}

func (v Verdict) String() string { return v.Message }

// Low and High are the accepted interval.
func (v Verdict) Low() float64  { return v.Want - v.Tolerance.Below }
func (v Verdict) High() float64 { return v.Want + v.Tolerance.Above }

// Within judges Got against [Want-Below, Want+Above]; with no sample it
// fails whatever Got is. detail completes the message
// "PASS|FAIL <subject> <property>: <detail>".
func Within(subject string, p Property, got, want float64, tol Tolerance, unit string, samples int, detail string) Verdict {
	v := Verdict{Subject: subject, Property: p, Got: got, Want: want, Tolerance: tol, Unit: unit, Samples: samples}
	v.Pass = samples > 0 && got >= v.Low() && got <= v.High()
	v.Message = fmt.Sprintf("%s %s %s: %s", state(v.Pass), subject, p, detail)
	return v
}

// Unmeasured is the failed verdict of a check whose figure could not be
// measured at all (no packet, no window, the sender failed).
func Unmeasured(subject string, p Property, want float64, unit, detail string) Verdict {
	return Verdict{Subject: subject, Property: p, Want: want, Unit: unit,
		Message: fmt.Sprintf("FAIL %s %s: %s", subject, p, detail)}
}

func state(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}
