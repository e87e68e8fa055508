package scenarios

import "fmt"

// ZoneSteps act on one zone of an interconnect control plane (a zone per
// node, one controller per zone): stop that zone's controller and start
// it again. Other zones' controllers keep running.
type ZoneSteps struct {
	StopZoneController  *StopZoneController  `yaml:"stopZoneController"`
	StartZoneController *StartZoneController `yaml:"startZoneController"`
}

// StopZoneController stops the controller of node Node's zone (SIGTERM
// and a clean exit, or SIGKILL) and leaves it stopped.
type StopZoneController struct {
	Node int    `yaml:"node"`
	Mode string `yaml:"mode,required"` // ControllerGraceful or ControllerKill9
}

// StartZoneController starts the controller of node Node's zone again
// and waits until it is synced and its zone's rows equal the compiler's
// rows for the cluster's objects.
type StartZoneController struct {
	Node int `yaml:"node"`
}

func (s *StopZoneController) validate(v *validator, at stepAt) error {
	if err := v.uplinkIndex(s.Node, at.path+".node"); err != nil {
		return err
	}
	if s.Mode != ControllerGraceful && s.Mode != ControllerKill9 {
		return v.d.errAt(at.path+".mode", "invalid mode %q (want %s or %s)", s.Mode, ControllerGraceful, ControllerKill9)
	}
	if at.st.zoneDown[s.Node] {
		return v.d.errAt(at.path+".node", "the controller of node %d's zone is already stopped at this step", s.Node)
	}
	at.st.zoneDown[s.Node] = true
	return nil
}

// Describe: which zone's controller stops, how.
func (s *StopZoneController) Describe(*Step) string {
	return fmt.Sprintf("%s the controller of node %d's zone", s.Mode, s.Node)
}

func (s *StartZoneController) validate(v *validator, at stepAt) error {
	if err := v.uplinkIndex(s.Node, at.path+".node"); err != nil {
		return err
	}
	if !at.st.zoneDown[s.Node] {
		return v.d.errAt(at.path+".node", "the controller of node %d's zone runs at this step (stop it first: stopZoneController)", s.Node)
	}
	delete(at.st.zoneDown, s.Node)
	return nil
}

// Describe: which zone's controller starts.
func (s *StartZoneController) Describe(*Step) string {
	return fmt.Sprintf("start the controller of node %d's zone; its zone converges", s.Node)
}
