package deploy

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// containerName is the controller's container in the manifests.
const containerName = "nqos-controller"

// ovnkubeNetworkQoSFlag tells the controller whether ovnkube's own
// NetworkQoS controller runs.
const ovnkubeNetworkQoSFlag = "--ovnkube-enable-network-qos"

// Pod template annotations the KinD patch sets: a rebuilt image under the
// same tag, or a new TLS Secret, changes the template and so rolls out.
const (
	annotationImageID = "nqos.dev/kind-image-id"
	annotationTLSHash = "nqos.dev/kind-nb-tls-sha256"
)

// kindPatch is what config/deploy/deployment-central.yaml needs in an
// nqos KinD cluster, which has neither kube-proxy nor CoreDNS: the API
// server and the Northbound are addressed by the control-plane node's
// InternalIP instead of Service names.
type kindPatch struct {
	APIServerHost string // KUBERNETES_SERVICE_HOST (the Service IP does not route)
	APIServerPort string // KUBERNETES_SERVICE_PORT
	NBAddress     string // --nb-address, ssl:IP:PORT
	Image         string // the container image, as loaded into the nodes
	ImageID       string // the image's ID (annotation)
	TLSHash       string // digest of the Secret's data (annotation)
	Replicas      int32  // 0: the manifest's
	// OVNKubeNetworkQoS: the cluster's ovnkube runs its own NetworkQoS
	// controller (--ovnkube-enable-network-qos=true), else false.
	OVNKubeNetworkQoS bool
}

// patchDeployment applies p to d in place. Applying it twice is the same
// as once. It fails when d lacks the controller container or its
// --nb-address argument.
func patchDeployment(d *appsv1.Deployment, p kindPatch) error {
	c := container(d, containerName)
	if c == nil {
		return fmt.Errorf("deployment %s/%s: no container %s", d.Namespace, d.Name, containerName)
	}
	if !replaceArg(c.Args, "--nb-address", p.NBAddress) {
		return fmt.Errorf("deployment %s/%s: container %s has no --nb-address argument", d.Namespace, d.Name, containerName)
	}
	// The flag says what the cluster's ovnkube runs (cluster/ovn/ovnkube.sh):
	// off, nqos owns every network and condition; on, ovnkube's
	// controller serves the networks with IPAM and owns its conditions.
	flagValue := fmt.Sprint(p.OVNKubeNetworkQoS)
	if !replaceArg(c.Args, ovnkubeNetworkQoSFlag, flagValue) {
		c.Args = append(c.Args, ovnkubeNetworkQoSFlag+"="+flagValue)
	}
	c.Env = setEnv(c.Env, "KUBERNETES_SERVICE_HOST", p.APIServerHost)
	c.Env = setEnv(c.Env, "KUBERNETES_SERVICE_PORT", p.APIServerPort)
	if p.Image != "" {
		c.Image = p.Image
	}
	if p.Replicas > 0 {
		r := p.Replicas
		d.Spec.Replicas = &r
	}
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[annotationImageID] = p.ImageID
	d.Spec.Template.Annotations[annotationTLSHash] = p.TLSHash
	return nil
}

func container(d *appsv1.Deployment, name string) *corev1.Container {
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	return nil
}

// replaceArg sets the value of every "--flag=value" in args; false when
// there is none.
func replaceArg(args []string, flag, value string) bool {
	found := false
	for i, a := range args {
		if strings.HasPrefix(a, flag+"=") {
			args[i] = flag + "=" + value
			found = true
		}
	}
	return found
}

// argValue is the value of the last "--flag=value" in args, or fallback.
func argValue(args []string, flag, fallback string) string {
	v := fallback
	for _, a := range args {
		if rest, ok := strings.CutPrefix(a, flag+"="); ok {
			v = rest
		}
	}
	return v
}

// setEnv sets name to a literal value, replacing any earlier definition.
func setEnv(env []corev1.EnvVar, name, value string) []corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			env[i] = corev1.EnvVar{Name: name, Value: value}
			return env
		}
	}
	return append(env, corev1.EnvVar{Name: name, Value: value})
}
