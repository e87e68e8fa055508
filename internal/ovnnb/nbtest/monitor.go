package nbtest

import (
	"context"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovsdbmon"
)

// Monitor opens an ovsdbmon monitor on the given columns of the given
// tables of this server (a connection independent of the client under
// test); it is closed by t.Cleanup.
func (s *Server) Monitor(t testing.TB, columns ovsdbmon.Columns) *ovsdbmon.Monitor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	m, err := ovsdbmon.Dial(ctx, s.Addr(), ovsdbmon.Options{Tables: columns})
	if err != nil {
		t.Fatalf("nbtest: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// Refs returns the names an OVN match references with sigil ("@" for
// port groups, "$" for address sets).
func Refs(match, sigil string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(match, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '@' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if name, ok := strings.CutPrefix(f, sigil); ok && name != "" {
			out = append(out, name)
		}
	}
	return out
}
