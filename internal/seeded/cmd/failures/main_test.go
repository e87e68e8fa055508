package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	in := `{"Action":"fail","Package":"example.com/m/p","Test":"TestA"}
{"Action":"fail","Package":"example.com/m/q","FailedBuild":"example.com/m/q"}
FAIL scenario gold: dscp
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "fail\tp.TestA\nfail\tscenario gold: dscp\nbuild\texample.com/m/q\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}
