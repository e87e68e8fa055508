// Package testlog owns reading the output of a mutation-run test command:
// `go test -json` events, plain `go test -v` text, and the scenario
// runner's "FAIL scenario <name>: <property>" lines, in any mix. It
// reports what failed (tests, scenarios, packages) and which packages did
// not build, so hack/mutation.sh can say which test caught a seeded bug.
package testlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Result is what one test command's output says failed. Every slice is
// sorted and unique.
type Result struct {
	// Failed names failing tests as "<pkg>.<Test>[/<sub>]" (pkg is the
	// last import-path element; a parent is left out when a subtest of it
	// failed), failing scenarios as "scenario <name>: <property>", and
	// packages that failed with no failing test as "<pkg> (package)".
	Failed []string
	// BuildFailed are the import paths (or go test's text) of packages
	// that did not compile: a run with one cannot count as a catch.
	BuildFailed []string
}

// event is one `go test -json` (test2json) record.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

var (
	scenarioLine  = regexp.MustCompile(`FAIL scenario (\S+): (.+?)\s*$`)
	textFailLine  = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	textBuildFail = regexp.MustCompile(`^FAIL\s+(\S+)\s+\[(build|setup) failed\]`)
)

// collector accumulates failures while reading.
type collector struct {
	tests    map[string]map[string]bool // package -> failed tests
	pkgFail  map[string]bool            // package failed as a whole
	scenario map[string]bool
	build    map[string]bool
}

// Parse reads test output from r. Lines that start with '{' and decode as
// test2json events are events; every other line is text.
func Parse(r io.Reader) (Result, error) {
	c := &collector{tests: map[string]map[string]bool{}, pkgFail: map[string]bool{}, scenario: map[string]bool{}, build: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var ev event
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil && ev.Action != "" {
			c.event(ev)
			continue
		}
		c.text("", line)
	}
	if err := sc.Err(); err != nil {
		return Result{}, fmt.Errorf("read test output: %w", err)
	}
	return c.result(), nil
}

func (c *collector) event(ev event) {
	switch ev.Action {
	case "output", "build-output":
		for _, l := range strings.Split(ev.Output, "\n") {
			c.scenarioText(l)
		}
	case "build-fail":
		c.build[ev.ImportPath] = true
	case "fail":
		switch {
		case ev.Test != "":
			c.failTest(ev.Package, ev.Test)
		case ev.FailedBuild != "":
			c.build[ev.FailedBuild] = true
		default:
			c.pkgFail[ev.Package] = true
		}
	}
}

// text handles a plain output line; pkg is unknown in text output.
func (c *collector) text(pkg, line string) {
	if m := textFailLine.FindStringSubmatch(line); m != nil {
		c.failTest(pkg, m[1])
		return
	}
	if m := textBuildFail.FindStringSubmatch(line); m != nil {
		c.build[m[1]] = true
		return
	}
	c.scenarioText(line)
}

func (c *collector) scenarioText(line string) {
	if m := scenarioLine.FindStringSubmatch(line); m != nil {
		c.scenario["scenario "+m[1]+": "+m[2]] = true
	}
}

func (c *collector) failTest(pkg, test string) {
	if c.tests[pkg] == nil {
		c.tests[pkg] = map[string]bool{}
	}
	c.tests[pkg][test] = true
}

func (c *collector) result() Result {
	var r Result
	for pkg, tests := range c.tests {
		for t := range tests {
			if !hasFailedChild(tests, t) {
				r.Failed = append(r.Failed, qualified(pkg, t))
			}
		}
	}
	for pkg := range c.pkgFail {
		if len(c.tests[pkg]) == 0 && !c.build[pkg] {
			r.Failed = append(r.Failed, path.Base(pkg)+" (package)")
		}
	}
	for s := range c.scenario {
		r.Failed = append(r.Failed, s)
	}
	for b := range c.build {
		r.BuildFailed = append(r.BuildFailed, b)
	}
	sort.Strings(r.Failed)
	sort.Strings(r.BuildFailed)
	return r
}

func hasFailedChild(tests map[string]bool, t string) bool {
	for other := range tests {
		if strings.HasPrefix(other, t+"/") {
			return true
		}
	}
	return false
}

func qualified(pkg, test string) string {
	if pkg == "" {
		return test
	}
	return path.Base(pkg) + "." + test
}
