package deploytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The documented ports of every nqos pod.
const (
	metricsPort = 9476
	probePort   = 8081
)

// workload is one shipped Deployment or DaemonSet.
type workload struct {
	m    manifest
	pod  corev1.PodTemplateSpec
	kind string
}

func workloads(ms []manifest) []workload {
	var out []workload
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{m, o.Spec.Template, "Deployment"})
		case *appsv1.DaemonSet:
			out = append(out, workload{m, o.Spec.Template, "DaemonSet"})
		}
	}
	return out
}

// Every shipped workload is hardened: the RuntimeDefault seccomp profile,
// host paths (the NB socket directory) mounted read-only, the metrics
// (9476) and probe (8081) ports as documented, and a NetworkPolicy that
// admits only the metrics port, only from pods labelled as scrapers; the
// Lease rules name the Lease each workload uses (get and update by name,
// create, which RBAC cannot restrict by name, alone).
func TestDeployHardening(t *testing.T) {
	ms, err := readManifests()
	if err != nil {
		t.Fatal(err)
	}
	ws := workloads(ms)
	if len(ws) == 0 {
		t.Fatal("config/deploy: no workloads")
	}
	leases := map[string]string{} // ServiceAccount -> --leader-elect-lease-name
	for _, w := range ws {
		checkPod(t, w)
		if sa, lease := leaseOf(w.pod); lease != "" {
			leases[sa] = lease
		}
	}
	checkLeaseRoles(t, ms, leases)
	checkNetworkPolicy(t, ms, ws)
}

func checkPod(t *testing.T, w workload) {
	t.Helper()
	sc := w.pod.Spec.SecurityContext
	if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext.seccompProfile is not RuntimeDefault", w.m)
	}
	hostPaths := map[string]bool{}
	for _, v := range w.pod.Spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = true
		}
	}
	for _, c := range w.pod.Spec.Containers {
		for _, vm := range c.VolumeMounts {
			if hostPaths[vm.Name] && !vm.ReadOnly {
				t.Errorf("%s container %s: host path volume %s mounted read-write", w.m, c.Name, vm.Name)
			}
		}
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if ports["metrics"] != metricsPort || ports["probes"] != probePort {
			t.Errorf("%s container %s: ports %v, want metrics %d and probes %d", w.m, c.Name, ports, metricsPort, probePort)
		}
		for flag, port := range map[string]int{"--metrics-bind-address": metricsPort, "--health-probe-bind-address": probePort} {
			if !slices.Contains(c.Args, fmt.Sprintf("%s=:%d", flag, port)) {
				t.Errorf("%s container %s: args %v lack %s=:%d", w.m, c.Name, c.Args, flag, port)
			}
		}
	}
}

// leaseOf returns the pod's ServiceAccount and the Lease it elects on
// ("" without --leader-elect).
func leaseOf(pod corev1.PodTemplateSpec) (sa, lease string) {
	for _, c := range pod.Spec.Containers {
		if !slices.Contains(c.Args, "--leader-elect") {
			continue
		}
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--leader-elect-lease-name="); ok {
				lease = v
			}
		}
	}
	return pod.Spec.ServiceAccountName, lease
}

// checkLeaseRoles: the Role bound to each electing ServiceAccount grants
// get and update on its Lease by name only, and create without a name.
func checkLeaseRoles(t *testing.T, ms []manifest, leases map[string]string) {
	t.Helper()
	if len(leases) == 0 {
		t.Fatal("no workload elects a leader")
	}
	roles := map[string]*rbacv1.Role{}
	for _, m := range ms {
		if r, ok := m.obj.(*rbacv1.Role); ok {
			roles[r.Name] = r
		}
	}
	for _, m := range ms {
		rb, ok := m.obj.(*rbacv1.RoleBinding)
		if !ok || len(rb.Subjects) != 1 {
			continue
		}
		lease, ok := leases[rb.Subjects[0].Name]
		if !ok {
			continue
		}
		delete(leases, rb.Subjects[0].Name)
		role := roles[rb.RoleRef.Name]
		if role == nil {
			t.Errorf("%s: Role %s not shipped", m, rb.RoleRef.Name)
			continue
		}
		for _, rule := range role.Rules {
			for _, v := range rule.Verbs {
				named := len(rule.ResourceNames) > 0
				switch {
				case v == "create" && named:
					t.Errorf("Role %s: create leases restricted by name (RBAC never matches it)", role.Name)
				case v != "create" && (!named || !slices.Equal(rule.ResourceNames, []string{lease})):
					t.Errorf("Role %s: %s leases names %v, want only [%s]", role.Name, v, rule.ResourceNames, lease)
				}
			}
		}
	}
	for sa := range leases {
		t.Errorf("ServiceAccount %s elects on a Lease but no RoleBinding grants it", sa)
	}
}

// checkNetworkPolicy: one policy selects every nqos pod, restricts
// ingress, and admits only the metrics port from labelled scrapers.
func checkNetworkPolicy(t *testing.T, ms []manifest, ws []workload) {
	t.Helper()
	var pols []*networkingv1.NetworkPolicy
	for _, m := range ms {
		if p, ok := m.obj.(*networkingv1.NetworkPolicy); ok {
			pols = append(pols, p)
		}
	}
	if len(pols) != 1 {
		t.Fatalf("config/deploy: %d NetworkPolicies, want 1", len(pols))
	}
	p := pols[0]
	if p.Namespace != deployNS || !slices.Equal(p.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("NetworkPolicy %s/%s: policyTypes %v, want [Ingress] in %s", p.Namespace, p.Name, p.Spec.PolicyTypes, deployNS)
	}
	for _, w := range ws {
		for k, v := range p.Spec.PodSelector.MatchLabels {
			if w.pod.Labels[k] != v {
				t.Errorf("NetworkPolicy %s does not select %s (label %s=%s)", p.Name, w.m, k, v)
			}
		}
	}
	if len(p.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("NetworkPolicy %s selects by no label", p.Name)
	}
	if len(p.Spec.Ingress) != 1 {
		t.Fatalf("NetworkPolicy %s: %d ingress rules, want 1 (metrics)", p.Name, len(p.Spec.Ingress))
	}
	in := p.Spec.Ingress[0]
	if len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.IntValue() != metricsPort {
		t.Errorf("NetworkPolicy %s admits ports %v, want only %d", p.Name, in.Ports, metricsPort)
	}
	if len(in.From) == 0 {
		t.Errorf("NetworkPolicy %s admits the metrics port from everywhere, want labelled scrapers only", p.Name)
	}
	for _, f := range in.From {
		if f.IPBlock != nil || (f.PodSelector == nil && f.NamespaceSelector == nil) {
			t.Errorf("NetworkPolicy %s: peer %+v is not a label selector", p.Name, f)
		}
	}
}
