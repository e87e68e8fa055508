package deploy

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The manifests of per-node mode, relative to the repository root.
const (
	daemonSetFile  = "config/deploy/daemonset-node.yaml"
	aggregatorFile = "config/deploy/aggregator.yaml"
	// aggregatorLease is the aggregator's --leader-elect-lease-name.
	aggregatorLease = "nqos-aggregator"
)

// Where nqos-kind up records the cluster's topology (cluster.TopologyKey).
const (
	kindTopologyKey      = "topology"
	topologyInterconnect = "interconnect"
	topologyCentral      = "central"
)

// topology reads the cluster's topology: "interconnect" or "central";
// no ConfigMap or no key is central (a cluster made before the key); any
// other value, or a failed read, is an error.
func (t *target) topology(ctx context.Context) (string, error) {
	return t.kindChoice(ctx, kindTopologyKey, topologyCentral, topologyInterconnect, topologyCentral)
}

// deployZones deploys per-node mode on an interconnect cluster: the
// DaemonSet of config/deploy/daemonset-node.yaml (each pod on its node's
// NB unix socket, --node) and, while ovnkube's own NetworkQoS is off,
// the status aggregator of config/deploy/aggregator.yaml, both with the
// KinD patch (API server by the control plane's IP, the loaded image).
// It waits until every node's pod is ready and the aggregator holds its
// Lease.
func (t *target) deployZones(ctx context.Context, s Spec, imageID string, ovnkubeNQoS bool, out io.Writer, step func(string)) error {
	p := kindPatch{APIServerHost: t.cpIP.String(), APIServerPort: apiServerPort, Image: s.Image, ImageID: imageID,
		OVNKubeNetworkQoS: ovnkubeNQoS}
	ds, err := readDaemonSet(filepath.Join(t.repo, daemonSetFile))
	if err != nil {
		return err
	}
	if err := patchNodeTemplate(&ds.Spec.Template, p); err != nil {
		return fmt.Errorf("%s: daemonset %s/%s: %w", daemonSetFile, ds.Namespace, ds.Name, err)
	}
	what, name, err := t.kube.applyTyped(ctx, ds, "apps/v1", "DaemonSet")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %s (%s, KinD patch: KUBERNETES_SERVICE_HOST=%s, %s=%t, image %s)\n",
		what, name, daemonSetFile, t.cpIP, ovnkubeNetworkQoSFlag, ovnkubeNQoS, s.Image)
	agg, err := t.applyAggregator(ctx, p, ovnkubeNQoS, out)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	pods, err := t.kube.waitDaemonSet(wctx, ds.Namespace, ds.Name)
	if err != nil {
		return err
	}
	step("daemonset rollout")
	fmt.Fprintf(out, "daemonset %s/%s rolled out: ready pods %s\n", ds.Namespace, ds.Name, strings.Join(pods, " "))
	if agg == nil {
		return nil
	}
	return t.rollout(ctx, wctx, agg, aggregatorLease, func() { step("aggregator rollout") }, out)
}

// applyAggregator applies aggregator.yaml with the KinD patch on its
// Deployment, unless ovnkube's NetworkQoS runs (its cluster manager
// writes status.status then; an aggregator left from before is deleted).
// It returns the Deployment it applied (nil when none).
func (t *target) applyAggregator(ctx context.Context, p kindPatch, ovnkubeNQoS bool, out io.Writer) (*appsv1.Deployment, error) {
	objs, err := readObjects(filepath.Join(t.repo, aggregatorFile))
	if err != nil {
		return nil, err
	}
	var agg *appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", aggregatorFile, ref(o), err)
		}
		if err := patchTemplate(&d.Spec.Template, d.Spec.Template.Spec.Containers[0].Name, p); err != nil {
			return nil, fmt.Errorf("%s: deployment %s/%s: %w", aggregatorFile, d.Namespace, d.Name, err)
		}
		u, err := toUnstructured(&d, "apps/v1", "Deployment")
		if err != nil {
			return nil, err
		}
		*o = *u
		agg = &d
	}
	if agg == nil {
		return nil, fmt.Errorf("%s: no Deployment", aggregatorFile)
	}
	for _, o := range objs {
		if ovnkubeNQoS && o.GetKind() != "Deployment" {
			continue
		}
		what, err := t.applyOrDelete(ctx, o, ovnkubeNQoS)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "%s %s (%s)\n", what, ref(o), aggregatorFile)
	}
	if ovnkubeNQoS {
		return nil, nil
	}
	return agg, nil
}

func (t *target) applyOrDelete(ctx context.Context, o *unstructured.Unstructured, del bool) (string, error) {
	if del {
		return t.kube.del(ctx, o)
	}
	return t.kube.apply(ctx, o)
}

// readDaemonSet decodes path's single DaemonSet, rejecting unknown fields.
func readDaemonSet(path string) (*appsv1.DaemonSet, error) {
	return readNamespaced[appsv1.DaemonSet](path, "DaemonSet")
}

// waitDaemonSet waits until daemonset ns/name has rolled out its current
// template on every node it schedules to and each of its pods answers
// /readyz; it returns the pods as pod@node.
func (k *kube) waitDaemonSet(ctx context.Context, ns, name string) ([]string, error) {
	var pods []string
	err := pollState(ctx, fmt.Sprintf("rollout of daemonset %s/%s", ns, name), func(ctx context.Context) (bool, string, error) {
		d, err := k.cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := d.Status
		state := fmt.Sprintf("generation %d observed %d; desired %d updated %d ready %d available %d",
			d.Generation, s.ObservedGeneration, s.DesiredNumberScheduled, s.UpdatedNumberScheduled, s.NumberReady, s.NumberAvailable)
		if s.ObservedGeneration < d.Generation || s.DesiredNumberScheduled == 0 ||
			s.UpdatedNumberScheduled < s.DesiredNumberScheduled || s.NumberAvailable < s.DesiredNumberScheduled {
			return false, state, nil
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return false, "", fmt.Errorf("selector of daemonset %s/%s: %w", ns, name, err)
		}
		ps, err := k.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return false, err.Error(), nil
		}
		pods = pods[:0]
		for i := range ps.Items {
			p := &ps.Items[i]
			if p.DeletionTimestamp != nil {
				return false, state + "; pod " + p.Name + " terminating", nil
			}
			if err := k.readyz(ctx, ns, p.Name); err != nil {
				return false, fmt.Sprintf("%s; pod %s /readyz: %v", state, p.Name, err), nil
			}
			pods = append(pods, p.Name+"@"+p.Spec.NodeName)
		}
		return len(pods) == int(s.DesiredNumberScheduled), state, nil
	})
	return pods, err
}

// patchNodeTemplate is the KinD patch of the per-node controller's pod
// template: the patch of every template, and --ovnkube-enable-network-qos
// as the cluster's ovnkube runs.
func patchNodeTemplate(tpl *corev1.PodTemplateSpec, p kindPatch) error {
	if err := patchTemplate(tpl, containerName, p); err != nil {
		return err
	}
	c := templateContainer(tpl, containerName)
	flagValue := fmt.Sprint(p.OVNKubeNetworkQoS)
	if !replaceArg(c.Args, ovnkubeNetworkQoSFlag, flagValue) {
		c.Args = append(c.Args, ovnkubeNetworkQoSFlag+"="+flagValue)
	}
	return nil
}

// patchTemplate sets container name's API server address and image and
// the template's image annotation (a rebuilt image rolls out).
func patchTemplate(tpl *corev1.PodTemplateSpec, name string, p kindPatch) error {
	c := templateContainer(tpl, name)
	if c == nil {
		return fmt.Errorf("no container %s", name)
	}
	c.Env = setEnv(c.Env, "KUBERNETES_SERVICE_HOST", p.APIServerHost)
	c.Env = setEnv(c.Env, "KUBERNETES_SERVICE_PORT", p.APIServerPort)
	if p.Image != "" {
		c.Image = p.Image
	}
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[annotationImageID] = p.ImageID
	return nil
}

func templateContainer(tpl *corev1.PodTemplateSpec, name string) *corev1.Container {
	for i := range tpl.Spec.Containers {
		if c := &tpl.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	return nil
}
