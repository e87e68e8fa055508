package ovntrace

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	// sectionRE is a section header such as
	// egress(dp="ls1", inport="vm1", outport="ln"); a line of dashes follows.
	sectionRE = regexp.MustCompile(`^([a-z_]+)\((.*)\)$`)
	// attrRE is one key="value" of a section header.
	attrRE = regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	// stageRE is a matched logical flow:
	// 5. ls_out_qos_mark (northd.c:7022): <match>, priority 10701, uuid 23b27c81
	// The match may itself contain ", ", so priority and uuid anchor at the end.
	stageRE = regexp.MustCompile(`^(\d+)\. ([A-Za-z0-9_]+)(?: \(([^)]*)\))?: (.*), priority (\d+), uuid ([0-9a-f]+)$`)
	// outputRE is the comment ovn-trace prints when a packet leaves.
	outputRE = regexp.MustCompile(`^/\* output to "([^"]*)", type "([^"]*)" \*/;?$`)
)

// ErrNoTrace is returned when ovn-trace printed no trace, such as for an
// unknown datapath or a microflow it could not parse (both exit 0).
var ErrNoTrace = errors.New("ovn-trace printed no trace")

// frame is a section on the indentation stack and the pipeline its
// stage lines belong to (-1 for none).
type frame struct {
	indent int
	pipe   int
}

type parser struct {
	pipes []Pipeline
	stack []frame
	stage *StageHit
}

// Parse decodes the stdout of `ovn-trace --detailed` (OVN 23.03 and 25.03 format).
func Parse(raw string) (Prediction, error) {
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first == len(lines) || !strings.HasPrefix(lines[first], "# ") {
		msg := "empty output"
		if first < len(lines) {
			msg = strings.TrimSpace(lines[first])
		}
		return Prediction{}, fmt.Errorf("%w: %s", ErrNoTrace, msg)
	}
	p := &parser{}
	for i := first + 1; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " ")
		if strings.TrimSpace(line) == "" {
			continue
		}
		isHeader := i+1 < len(lines) && isDashes(lines[i+1])
		if err := p.line(line, isHeader); err != nil {
			return Prediction{}, fmt.Errorf("ovn-trace output line %d %q: %w", i+1, strings.TrimSpace(line), err)
		}
		if isHeader {
			i++
		}
	}
	ds, err := deliveries(p.pipes)
	if err != nil {
		return Prediction{}, err
	}
	if p.pipes == nil {
		p.pipes = []Pipeline{}
	}
	if ds == nil {
		ds = []Delivery{}
	}
	return Prediction{OpenFlow: strings.TrimPrefix(lines[first], "# "), Pipelines: p.pipes, Deliveries: ds, Raw: raw}, nil
}

func isDashes(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.Trim(s, "-") == ""
}

func (p *parser) line(line string, isHeader bool) error {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	text := strings.TrimSpace(line)
	if isHeader {
		m := sectionRE.FindStringSubmatch(text)
		if m == nil {
			return errors.New("underlined line is not a section header")
		}
		p.section(indent, m[1], m[2])
		return nil
	}
	if m := stageRE.FindStringSubmatch(text); m != nil {
		return p.stageLine(m)
	}
	pipe := p.current()
	if pipe < 0 {
		return errors.New("text outside any ingress/egress pipeline")
	}
	if m := outputRE.FindStringSubmatch(text); m != nil {
		p.pipes[pipe].Output = &Output{Port: m[1], Type: m[2]}
		return nil
	}
	if strings.HasPrefix(text, "/*") || p.stage == nil {
		p.pipes[pipe].Notes = append(p.pipes[pipe].Notes, text)
		return nil
	}
	p.stage.Actions = append(p.stage.Actions, text)
	return nil
}

// section opens a section at indent. A nested or same-level
// ingress/egress section starts a new pipeline fed by the nearest open
// pipeline of the other kind; any other section (multicast, ct_next, ...)
// continues the pipeline open at its level.
func (p *parser) section(indent int, kind, attrs string) {
	var cands []frame // most recent first
	for len(p.stack) > 0 && p.stack[len(p.stack)-1].indent >= indent {
		if top := p.stack[len(p.stack)-1]; top.indent == indent {
			cands = append(cands, top)
		}
		p.stack = p.stack[:len(p.stack)-1]
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		cands = append(cands, p.stack[i])
	}
	p.stage = nil
	if kind != "ingress" && kind != "egress" {
		p.stack = append(p.stack, frame{indent, firstPipe(cands, func(int) bool { return true })})
		return
	}
	parent := firstPipe(cands, func(i int) bool { return p.pipes[i].Kind != kind })
	a := map[string]string{}
	for _, m := range attrRE.FindAllStringSubmatch(attrs, -1) {
		a[m[1]] = m[2]
	}
	p.pipes = append(p.pipes, Pipeline{Kind: kind, Datapath: a["dp"], InPort: a["inport"],
		OutPort: a["outport"], Parent: parent, Stages: []StageHit{}})
	p.stack = append(p.stack, frame{indent, len(p.pipes) - 1})
}

// firstPipe is the pipeline of the first candidate that has one ok
// accepts, or -1.
func firstPipe(cands []frame, ok func(pipe int) bool) int {
	for _, c := range cands {
		if c.pipe >= 0 && ok(c.pipe) {
			return c.pipe
		}
	}
	return -1
}

func (p *parser) current() int {
	if len(p.stack) == 0 {
		return -1
	}
	return p.stack[len(p.stack)-1].pipe
}

func (p *parser) stageLine(m []string) error {
	pipe := p.current()
	if pipe < 0 {
		return errors.New("stage outside any ingress/egress pipeline")
	}
	table, err := strconv.Atoi(m[1])
	if err != nil {
		return fmt.Errorf("table %q: %w", m[1], err)
	}
	prio, err := strconv.Atoi(m[5])
	if err != nil {
		return fmt.Errorf("priority %q: %w", m[5], err)
	}
	stages := &p.pipes[pipe].Stages
	*stages = append(*stages, StageHit{Table: table, Stage: m[2], Source: m[3], Match: m[4],
		Priority: prio, UUID: m[6], Actions: []string{}})
	p.stage = &(*stages)[len(*stages)-1]
	return nil
}
