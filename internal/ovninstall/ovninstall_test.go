package ovninstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, s := range []string{"23.03", "25.03"} {
		if v, err := ParseVersion(s); err != nil || string(v) != s {
			t.Errorf("ParseVersion(%q) = %q, %v", s, v, err)
		}
	}
	for _, s := range []string{"", "24.09", "25.03.0", "latest"} {
		if _, err := ParseVersion(s); err == nil || !strings.Contains(err.Error(), "want one of 23.03, 25.03") {
			t.Errorf("ParseVersion(%q) error = %v, want the supported versions named", s, err)
		}
	}
}

func TestSelected(t *testing.T) {
	t.Setenv(EnvVar, "")
	if v, err := Selected(); err != nil || v != Default {
		t.Errorf("unset: Selected = %q, %v; want %q", v, err, Default)
	}
	t.Setenv(EnvVar, "25.03")
	if v, err := Selected(); err != nil || v != V2503 {
		t.Errorf("25.03: Selected = %q, %v", v, err)
	}
	t.Setenv(EnvVar, "26.03")
	if _, err := Selected(); err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("26.03: Selected error = %v, want it to name %s", err, EnvVar)
	}
}

func TestParseProgramVersion(t *testing.T) {
	tests := []struct {
		tool, out, want string
		ok              bool
	}{
		{"ovn-northd", "ovn-northd 25.03.0\nOpen vSwitch Library 3.5.0\n", "25.03.0", true},
		{"ovn-nbctl", "ovn-nbctl 24.09.0-rc1\nOpen vSwitch Library 3.4.0\nDB Schema 7.6.0\n", "24.09.0-rc1", true},
		{"ovn-northd", "ovn-nbctl 23.03.1\n", "", false},
		{"ovn-northd", "ovn-northd\n", "", false},
		{"ovn-northd", "", "", false},
		{"ovn-northd", "ovn-northd v23\n", "", false},
	}
	for _, tt := range tests {
		got, err := ParseProgramVersion(tt.tool, tt.out)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseProgramVersion(%q, %q) = %q, %v; want %q ok=%v", tt.tool, tt.out, got, err, tt.want, tt.ok)
		}
	}
}

// fakeCache points the user cache directory at a temporary one and
// returns where version 25.03 goes in it.
func fakeCache(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := CacheDir(V2503)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "nqos", "ovn-25.03"); dir != want {
		t.Fatalf("CacheDir = %s, want %s", dir, want)
	}
	return dir
}

func writeFile(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func TestResolveBuiltRoot(t *testing.T) {
	dir := fakeCache(t)
	if _, err := Resolve(V2503); err == nil || !strings.Contains(err.Error(), "hack/ovn-root.sh 25.03") {
		t.Fatalf("no root: Resolve error = %v, want the install command named", err)
	}
	writeFile(t, filepath.Join(dir, "complete"), 0o644)
	for _, p := range Programs() {
		writeFile(t, filepath.Join(dir, "bin", p), 0o755)
	}
	inst := Install{Version: V2503, Root: filepath.Join(dir, "root"), BinDir: filepath.Join(dir, "bin")}
	for _, s := range []string{inst.NBSchema(), inst.SBSchema()} {
		writeFile(t, s, 0o644)
	}
	if _, err := Resolve(V2503); err == nil || !strings.Contains(err.Error(), "vswitch.ovsschema") {
		t.Fatalf("no vswitch schema: Resolve error = %v, want the file named", err)
	}
	writeFile(t, inst.VSwitchSchema(), 0o644)
	got, err := Resolve(V2503)
	if err != nil || got != inst {
		t.Fatalf("Resolve = %+v, %v; want %+v", got, err, inst)
	}
	if err := os.Chmod(filepath.Join(dir, "bin", "ovn-trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(V2503); err == nil || !strings.Contains(err.Error(), "ovn-trace") {
		t.Fatalf("wrapper not executable: Resolve error = %v, want ovn-trace named", err)
	}
	if _, err := Resolve("24.03"); err == nil {
		t.Fatal("Resolve(24.03) succeeded")
	}
}

func TestSearchPath(t *testing.T) {
	dir := fakeCache(t)
	bin := filepath.Join(dir, "bin")
	host := Install{Version: V2303, Root: "/"}
	built := Install{Version: V2503, Root: filepath.Join(dir, "root"), BinDir: bin}
	path := strings.Join([]string{bin, "/usr/local/bin", "/usr/sbin", bin + "/", "/usr/bin"}, ":")
	if got, want := host.SearchPath(path), "/usr/local/bin:/usr/sbin:/usr/bin"; got != want {
		t.Errorf("23.03 SearchPath = %q, want %q", got, want)
	}
	if got, want := built.SearchPath("/usr/sbin:"+bin+":/usr/bin"), bin+":/usr/sbin:/usr/bin"; got != want {
		t.Errorf("25.03 SearchPath = %q, want %q", got, want)
	}
}
