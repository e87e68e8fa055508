package inspect

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/nqos/nqos/internal/qos"
)

// fileList is a repeatable -f flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// Compile runs `compile -f FILE_OR_DIR [-f ...] [--node NAME] [-o
// json|yaml|nbctl]`: the OVN rows the manifests compile to.
func Compile(ctx context.Context, args []string, env Env) error {
	return compileMain(ctx, args, env.Stdout, env.Stderr)
}

func compileMain(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files fileList
	fs.Var(&files, "f", "manifest file or directory of *.yaml/*.yml/*.json (repeatable)")
	node := fs.String("node", "", "only pods on this node are port-group members")
	output := fs.String("o", "json", "output format: json, yaml or nbctl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(files) == 0 || fs.NArg() > 0 {
		return errors.New("usage: nqos-sim compile -f FILE_OR_DIR [-f ...] [--node NAME] [-o json|yaml|nbctl]")
	}
	in, err := readManifests(files)
	if err != nil {
		return err
	}
	in.Node = *node
	results := qos.CompileAll(in)
	var invalid []string
	for _, r := range results {
		if r.Err != nil {
			invalid = append(invalid, r.Err.Error())
		}
	}
	if len(invalid) > 0 {
		return fmt.Errorf("invalid NetworkQoS:\n  %s", strings.Join(invalid, "\n  "))
	}
	return writeDesired(stdout, qos.Assemble(results), *output)
}

func writeDesired(w io.Writer, d qos.Desired, format string) error {
	switch format {
	case "json":
		return qos.WriteJSON(w, d)
	case "yaml":
		out, err := yaml.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode yaml: %w", err)
		}
		_, err = w.Write(out)
		return err
	case "nbctl":
		_, err := io.WriteString(w, nbctlScript(d))
		return err
	}
	return fmt.Errorf("-o %q: want json, yaml or nbctl", format)
}

// readManifests decodes every file (directories: their *.yaml, *.yml and
// *.json files, sorted) into one Input.
func readManifests(paths []string) (qos.Input, error) {
	var all qos.Input
	for _, p := range paths {
		files, err := ManifestFiles(p)
		if err != nil {
			return qos.Input{}, err
		}
		for _, file := range files {
			in, err := decodeFile(file)
			if err != nil {
				return qos.Input{}, err
			}
			all.NetworkQoSes = append(all.NetworkQoSes, in.NetworkQoSes...)
			all.Namespaces = append(all.Namespaces, in.Namespaces...)
			all.Pods = append(all.Pods, in.Pods...)
			all.NADs = append(all.NADs, in.NADs...)
			all.CUDNs = append(all.CUDNs, in.CUDNs...)
		}
	}
	return all, nil
}

func decodeFile(file string) (qos.Input, error) {
	f, err := os.Open(file)
	if err != nil {
		return qos.Input{}, fmt.Errorf("open manifest: %w", err)
	}
	defer f.Close()
	return qos.DecodeManifests(f, file)
}

// nbctlScript renders ovn-nbctl commands that create d's rows on an NB
// that already has the logical switches and ports. Port groups and
// address sets come first, so no QoS row names a missing one.
func nbctlScript(d qos.Desired) string {
	var b strings.Builder
	b.WriteString("# ovn-nbctl commands creating the desired NetworkQoS rows (nqos-sim compile -o nbctl).\n")
	b.WriteString("# The logical switches and logical switch ports they name must already exist.\n")
	for _, pg := range d.PortGroups {
		args := append([]string{"pg-add", pg.Name}, pg.Ports...)
		args = append(args, "--", "set", "Port_Group", pg.Name)
		args = append(args, mapArgs("external_ids", pg.ExternalIDs)...)
		writeCommand(&b, args)
	}
	for _, as := range d.AddressSets {
		args := []string{"create", "Address_Set", "name=" + ovsString(as.Name)}
		if len(as.Addresses) > 0 {
			quoted := make([]string, len(as.Addresses))
			for i, a := range as.Addresses {
				quoted[i] = ovsString(a)
			}
			args = append(args, "addresses=["+strings.Join(quoted, ",")+"]")
		}
		writeCommand(&b, append(args, mapArgs("external_ids", as.ExternalIDs)...))
	}
	for _, q := range d.QoS {
		writeCommand(&b, qosArgs(q))
	}
	return b.String()
}

func qosArgs(q qos.QoSRow) []string {
	args := []string{"--", "--id=@qos", "create", "QoS",
		"priority=" + strconv.Itoa(q.Priority),
		"direction=" + ovsString(q.Direction),
		"match=" + ovsString(q.Match),
		"action:dscp=" + strconv.Itoa(q.Action.DSCP),
	}
	if bw := q.Bandwidth; bw != nil {
		if bw.Rate > 0 {
			args = append(args, "bandwidth:rate="+strconv.FormatUint(uint64(bw.Rate), 10))
		}
		if bw.Burst > 0 {
			args = append(args, "bandwidth:burst="+strconv.FormatUint(uint64(bw.Burst), 10))
		}
	}
	args = append(args, mapArgs("external_ids", q.ExternalIDs)...)
	return append(args, "--", "add", "Logical_Switch", q.Switch, "qos_rules", "@qos")
}

// mapArgs renders a map column as sorted column:"key"="value" arguments.
func mapArgs(column string, m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = column + ":" + ovsString(k) + "=" + ovsString(m[k])
	}
	return out
}

// ovsString quotes an OVSDB string atom for ovn-nbctl.
func ovsString(s string) string { return strconv.Quote(s) }

// writeCommand writes one shell-quoted ovn-nbctl command line.
func writeCommand(b *strings.Builder, args []string) {
	b.WriteString("ovn-nbctl")
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	b.WriteByte('\n')
}

// shellQuote single-quotes a word unless it is made of safe characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,/:=@%+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
