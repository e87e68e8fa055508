package junit

import (
	"bytes"
	"testing"
)

// TestWrite: the counts come from the cases (a case counts once: failed
// before erred before skipped), the totals from the suites, empty times
// are left out, and the document is the header, two-space indentation
// and a final newline.
func TestWrite(t *testing.T) {
	s := Suite{Name: "s", Cases: []Case{
		{Name: "ok", Classname: "c"},
		{Name: "f", Classname: "c", Failure: &Message{Message: "m", Body: "b"}, Error: &Message{Message: "e"}},
		{Name: "e", Classname: "c", Error: &Message{Message: "e"}},
		{Name: "k", Classname: "c", Skipped: &Message{Message: "k"}},
	}}
	s.Count()
	d := Suites{Name: "run"}
	d.Add(s)
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="run" tests="4" failures="1" errors="1" skipped="1">
  <testsuite name="s" tests="4" failures="1" errors="1" skipped="1">
    <testcase name="ok" classname="c"></testcase>
    <testcase name="f" classname="c">
      <failure message="m">b</failure>
      <error message="e"></error>
    </testcase>
    <testcase name="e" classname="c">
      <error message="e"></error>
    </testcase>
    <testcase name="k" classname="c">
      <skipped message="k"></skipped>
    </testcase>
  </testsuite>
</testsuites>
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
