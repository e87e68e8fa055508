package scenarios

// ControllerSpec is how the testbed runs the NetworkQoS controller.
type ControllerSpec struct {
	// Boot starts the controller when the testbed boots (default true);
	// with false, an upgrade step starts it.
	Boot *bool `yaml:"boot"`
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
