package scenarios

// ControllerSpec is how the testbed runs the NetworkQoS controller.
type ControllerSpec struct {
	// Boot starts the controller when the testbed boots (default true);
	// with false, an upgrade step starts it.
	Boot *bool `yaml:"boot"`
}

// ControllerSteps are the step kinds acting on the controller process.
type ControllerSteps struct {
	RestartController *RestartController `yaml:"restartController"`
	Upgrade           *Upgrade           `yaml:"upgrade"`
}

// Modes of a restartController step.
const (
	ControllerGraceful = "graceful" // SIGTERM, clean exit, then a new process
	ControllerKill9    = "kill9"    // SIGKILL, then a new process
)

// RestartController stops the controller process (gracefully or with
// SIGKILL) and starts a new one while a VM's marked probe stream runs.
// With a burst (Apply, Delete), the step itself changes those objects
// and, with AfterTx > 0, stops the controller right after the AfterTx-th
// NB transaction since the burst began (mid-reconcile).
type RestartController struct {
	Mode    string   `yaml:"mode,required"`
	VM      string   `yaml:"vm,required"` // sends the probe stream to the probe's peer
	Apply   []string `yaml:"apply"`
	Delete  []string `yaml:"delete"`
	AfterTx int      `yaml:"afterTx"`

	// Applied and Deleted are the burst's manifest revisions, in order.
	Applied []*Manifest `yaml:"-"`
	Deleted []*Manifest `yaml:"-"`
}

// Upgrade pre-seeds the NB with legacy rows for NetworkQoS objects (a
// source address set of the selected VMs' IPv4 addresses, as the
// previous controller generation wrote them), waits until the probe is
// marked by them, then starts the controller, which migrates them.
type Upgrade struct {
	Legacy []string `yaml:"legacy,required"` // NetworkQoS manifest ids
	VM     string   `yaml:"vm,required"`     // sends the probe stream

	// Objects are the legacy objects' manifest revisions.
	Objects []*Manifest `yaml:"-"`
}

// BootsController reports whether the testbed starts the controller at
// boot.
func (sc *Scenario) BootsController() bool {
	return sc.Controller.Boot == nil || *sc.Controller.Boot
}

// ControllerProcess reports whether the scenario needs the controller as
// a separate process it can stop, kill and start (restartController or
// upgrade steps).
func (sc *Scenario) ControllerProcess() bool {
	for i := range sc.Steps {
		if s := &sc.Steps[i]; s.RestartController != nil || s.Upgrade != nil {
			return true
		}
	}
	return !sc.BootsController()
}
