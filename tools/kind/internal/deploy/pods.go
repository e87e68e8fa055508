package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// revisionAnnotation is where the deployment controller numbers templates.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// pod is one pod of a Deployment, as the report and the diagnosis show it.
type pod struct {
	name, node, ip string
	ready          bool
	state          string // phase, waiting reasons, the Ready condition's message
}

// currentPods lists the live pods of d's current template (the
// ReplicaSet of d's revision).
func (k *kube) currentPods(ctx context.Context, d *appsv1.Deployment) ([]pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	rss, err := k.cs.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("replica sets of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	hash := ""
	for _, rs := range rss.Items {
		if rs.Annotations[revisionAnnotation] == d.Annotations[revisionAnnotation] && metav1.IsControlledBy(&rs, d) {
			hash = rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		}
	}
	if hash == "" {
		return nil, fmt.Errorf("deployment %s/%s: no replica set of revision %s yet", d.Namespace, d.Name, d.Annotations[revisionAnnotation])
	}
	req, err := labels.NewRequirement(appsv1.DefaultDeploymentUniqueLabelKey, "=", []string{hash})
	if err != nil {
		return nil, err
	}
	ps, err := k.cs.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.Add(*req).String()})
	if err != nil {
		return nil, fmt.Errorf("pods of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	var pods []pod
	for i := range ps.Items {
		if p := &ps.Items[i]; p.DeletionTimestamp == nil {
			pods = append(pods, describePod(p))
		}
	}
	return pods, nil
}

func describePod(p *corev1.Pod) pod {
	d := pod{name: p.Name, node: p.Spec.NodeName, ip: p.Status.PodIP}
	parts := []string{string(p.Status.Phase)}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("container %s %s: %s", c.Name, w.Reason, w.Message))
		}
		if c.RestartCount > 0 {
			parts = append(parts, fmt.Sprintf("container %s restarted %d times", c.Name, c.RestartCount))
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			d.ready = c.Status == corev1.ConditionTrue
			parts = append(parts, fmt.Sprintf("Ready=%s %s", c.Status, c.Message))
		}
	}
	d.state = strings.TrimSpace(strings.Join(parts, "; "))
	return d
}

// diagnose explains why deployment ns/name is not rolled out: per pod of
// its current template its state, and for one not Ready its /readyz
// answer (through the API server's pod proxy) and its last log lines.
// It runs on its own short deadline: ctx may be the expired one.
func (k *kube) diagnose(ctx context.Context, ns, name string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	d, err := k.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	pods, err := k.currentPods(ctx, d)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "\n  pod %s on %s (%s): %s", p.name, p.node, p.ip, p.state)
		if p.ready {
			continue
		}
		if err := k.readyz(ctx, ns, p.name); err != nil {
			fmt.Fprintf(&b, "\n    /readyz: %v", err)
		}
		tail := int64(5)
		logs, err := k.cs.CoreV1().Pods(ns).GetLogs(p.name, &corev1.PodLogOptions{Container: containerName, TailLines: &tail}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(&b, "\n    log: %v", err)
			continue
		}
		for _, l := range strings.Split(strings.TrimSpace(string(logs)), "\n") {
			fmt.Fprintf(&b, "\n    log: %s", l)
		}
	}
	return b.String()
}
