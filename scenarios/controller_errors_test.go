package scenarios

import (
	"strings"
	"testing"
)

// controllerProbe is a probe line valid for controller steps in base.yaml.
const controllerProbe = "    probe: {peer: host-a, object: gold, dscp: 46, maxGap: 1s}\n"

// bootless makes base.yaml's controller not boot and inserts a step
// right after the first apply.
func bootless(step string) (string, string) {
	return "steps:\n  - apply: [blue, gold]\n", "controller: {boot: false}\nsteps:\n  - apply: [blue, gold]\n" + step
}

// controllerErrorCases are the error classes of restartController and
// upgrade steps, appended to errorCases (and errors.golden) in order.
var controllerErrorCases = func() []struct{ name, old, new string } {
	before := func(name, step string) struct{ name, old, new string } {
		return struct{ name, old, new string }{name, "  - delete: [gold]", step + "  - delete: [gold]"}
	}
	afterBoot := func(name, step string) struct{ name, old, new string } {
		old, nw := bootless(step)
		return struct{ name, old, new string }{name, old, nw}
	}
	return []struct{ name, old, new string }{
		before("restartcontroller-bad-mode", "  - restartController: {mode: hup, vm: vm-a}\n"+controllerProbe),
		before("restartcontroller-without-gap", "  - restartController: {mode: kill9, vm: vm-a}\n    probe: {peer: host-a, object: gold, dscp: 46}\n"),
		before("restartcontroller-unknown-vm", "  - restartController: {mode: kill9, vm: vm-z}\n"+controllerProbe),
		before("restartcontroller-without-probe", "  - restartController: {mode: kill9, vm: vm-a}\n"),
		before("restartcontroller-aftertx-without-burst", "  - restartController: {mode: kill9, vm: vm-a, afterTx: 1}\n"+controllerProbe),
		before("restartcontroller-aftertx-beyond-burst", "  - restartController: {mode: kill9, vm: vm-a, apply: [gold], afterTx: 2}\n"+controllerProbe),
		before("restartcontroller-unknown-burst-manifest", "  - restartController: {mode: kill9, vm: vm-a, apply: [silver]}\n"+controllerProbe),
		before("restartcontroller-burst-named-twice", "  - restartController: {mode: kill9, vm: vm-a, apply: [gold, gold]}\n"+controllerProbe),
		afterBoot("restartcontroller-controller-not-running", "  - restartController: {mode: graceful, vm: vm-a}\n"+controllerProbe),
		before("upgrade-controller-running", "  - upgrade: {legacy: [gold], vm: vm-a}\n"+controllerProbe),
		afterBoot("upgrade-legacy-not-networkqos", "  - upgrade: {legacy: [blue], vm: vm-a}\n"+controllerProbe),
		afterBoot("upgrade-legacy-empty", "  - upgrade: {legacy: [], vm: vm-a}\n"+controllerProbe),
		afterBoot("upgrade-twice", "  - upgrade: {legacy: [gold], vm: vm-a}\n"+controllerProbe+"  - upgrade: {legacy: [gold], vm: vm-a}\n"+controllerProbe),
		{"controller-boot-without-upgrade", "steps:\n", "controller: {boot: false}\nsteps:\n"},
		{"controller-boot-not-bool", "steps:\n", "controller: {boot: later}\nsteps:\n"},
	}
}()

// TestControllerStepsParse: a bootless scenario with an upgrade step and
// restartController steps with bursts parse, resolve their manifests and
// need the controller as a process.
func TestControllerStepsParse(t *testing.T) {
	old, nw := bootless("  - upgrade: {legacy: [gold], vm: vm-a}\n" + controllerProbe +
		"  - restartController: {mode: graceful, vm: vm-a, apply: [gold]}\n" + controllerProbe +
		"  - restartController: {mode: kill9, vm: vm-a, delete: [blue], afterTx: 2}\n" + controllerProbe)
	sc, err := Parse([]byte(strings.Replace(readBase(t), old, nw, 1)), "bootless.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if sc.BootsController() || !sc.ControllerProcess() {
		t.Errorf("boots %v, process %v; want a bootless process controller", sc.BootsController(), sc.ControllerProcess())
	}
	up, graceful, kill := sc.Steps[1], sc.Steps[2], sc.Steps[3]
	if up.Kind() != "upgrade" || len(up.Upgrade.Objects) != 1 || up.Upgrade.Objects[0].Key() != "NetworkQoS vms/gold" {
		t.Errorf("upgrade step %s objects %v", up.Kind(), up.Upgrade.Objects)
	}
	if kill.RestartController == nil || len(kill.RestartController.Deleted) != 1 || kill.RestartController.AfterTx != 2 {
		t.Errorf("kill step %+v", kill.RestartController)
	}
	if graceful.RestartController == nil || len(graceful.RestartController.Applied) != 1 {
		t.Errorf("graceful step %+v", graceful.RestartController)
	}
	if up.Probe.MaxGap == 0 || up.Probe.Manifest == nil {
		t.Errorf("upgrade probe %+v not resolved", up.Probe)
	}
}
