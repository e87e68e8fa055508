package testenv

import "testing"

func TestInCI(t *testing.T) {
	t.Setenv("CI", "true")
	if !InCI() {
		t.Fatal("CI=true: InCI false")
	}
	t.Setenv("CI", "")
	if InCI() {
		t.Fatal("CI empty: InCI true")
	}
}
