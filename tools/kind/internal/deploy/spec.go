package deploy

import (
	"fmt"
	"strings"
	"time"
)

// DefaultImage is the image config/deploy's manifests run.
const DefaultImage = "nqos/nqos-controller:dev"

// Spec is what Deploy deploys where.
type Spec struct {
	Name        string        // cluster nqos-<runid>
	Kubeconfig  string        // kubeconfig kind wrote for it
	Repo        string        // nqos checkout (config/, build/); empty: found from the working directory
	Image       string        // controller image, tagged in the engine of $DOCKER_HOST
	Replicas    int           // Deployment replicas; 0: the manifest's
	Build       BuildMode     // when to build Image from build/Containerfile
	BuilderRoot string        // hack/builder-root.sh's output, for a build
	NBCAFile    string        // CA put in the Secret instead of the generated one (to see the failure)
	Timeout     time.Duration // deadline for the rollout and the Lease
}

// validCluster checks the cluster name and that a kubeconfig is given.
func validCluster(name, kubeconfig string) error {
	switch {
	case !strings.HasPrefix(name, "nqos-") || len(name) == len("nqos-"):
		return fmt.Errorf("cluster name %q: want nqos-<runid>", name)
	case kubeconfig == "":
		return fmt.Errorf("cluster %s: no kubeconfig path", name)
	}
	return nil
}

func (s Spec) validate() error {
	if err := validCluster(s.Name, s.Kubeconfig); err != nil {
		return err
	}
	switch {
	case s.Image == "":
		return fmt.Errorf("cluster %s: no image", s.Name)
	case s.Replicas < 0:
		return fmt.Errorf("cluster %s: %d replicas", s.Name, s.Replicas)
	case s.Timeout <= 0:
		return fmt.Errorf("cluster %s: timeout must be positive", s.Name)
	}
	switch s.Build {
	case BuildNever, BuildMissing, BuildAlways:
	default:
		return fmt.Errorf("build %q: want %s, %s or %s", s.Build, BuildNever, BuildMissing, BuildAlways)
	}
	return nil
}
