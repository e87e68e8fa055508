package inspect

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/nqos/nqos/internal/intent"
)

// Explain runs `explain`: every VM's classes with the DSCP, meter and
// winning rule the compiled rows give, the shadowed rules, the meters'
// sharing.
func Explain(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var c common
	outputs := []string{"text", "json", "yaml"}
	if env.HTML != nil {
		outputs = append(outputs, "html")
	}
	c.register(fs, env, joinOr(outputs))
	if done, err := parseChecked(fs, args, func() error { return c.check(fs, outputs) }); done {
		return err
	}
	src, err := c.source()
	if err != nil {
		return Invalid(err)
	}
	rep, err := explainSource(ctx, src, &c)
	if err != nil {
		return err
	}
	return writeReport(env, c.output, src.String(), rep)
}

// explainSource loads a source and explains it; a set the compiler or
// the derivation refuses is invalid input.
func explainSource(ctx context.Context, src Source, c *common) (*intent.View, error) {
	cl, err := src.Load(ctx)
	if err != nil {
		return nil, err
	}
	fams, _ := c.families()
	v, err := intent.Explain(cl, intent.Options{OVN: c.ovn, Families: fams})
	if err != nil {
		return nil, Invalid(fmt.Errorf("%s: %w", src, err))
	}
	return v, nil
}

func writeReport(env Env, output, source string, v *intent.View) error {
	r := v.Report()
	if done, err := writeData(env.Stdout, output, r); done {
		return err
	}
	if output == "html" {
		return env.HTML(env.Stdout, source, r)
	}
	return intent.WriteText(env.Stdout, r)
}

// writeData writes v to w when output is json or yaml; done says it did.
func writeData(w io.Writer, output string, v any) (done bool, err error) {
	switch output {
	case "json":
		return true, writeJSON(w, v)
	case "yaml":
		return true, writeYAML(w, v)
	}
	return false, nil
}

func writeYAML(w io.Writer, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func joinOr(s []string) string {
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}
