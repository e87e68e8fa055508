package deploytest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/poll"
)

// deployNS is the namespace of config/deploy; zonesNS holds the zones'
// heartbeat Leases.
const (
	deployNS = "nqos-system"
	zonesNS  = "nqos-zones"
)

// controllerRole names the controller's ClusterRole (the aggregator has
// its own).
const controllerRole = "nqos-controller"

// shippedRBAC is the rules of config/deploy's ClusterRole and Roles of
// one component (its leader-election Role, its zone-heartbeat Role in
// nqos-zones), and the Lease name its leader-election Role grants.
type shippedRBAC struct {
	cluster, lease, zone []rbacv1.PolicyRule
	leaseName            string
}

// readRBAC reads the controller's rules.
func readRBAC(t testing.TB) shippedRBAC { return readRBACOf(t, controllerRole, shippedLease) }

// readRBACOf reads ClusterRole role and Role role-leader-election, whose
// Lease is lease.
func readRBACOf(t testing.TB, role, lease string) shippedRBAC {
	t.Helper()
	ms, err := readManifests()
	if err != nil {
		t.Fatal(err)
	}
	r := shippedRBAC{leaseName: lease}
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *rbacv1.ClusterRole:
			if o.Name == role {
				r.cluster = o.Rules
			}
		case *rbacv1.Role:
			if o.Name == role+"-leader-election" {
				r.lease = o.Rules
			}
			if o.Name == role+"-zone-heartbeat" && o.Namespace == zonesNS {
				r.zone = o.Rules
			}
		}
	}
	if len(r.cluster) == 0 || len(r.lease) == 0 {
		t.Fatalf("config/deploy: ClusterRole rules %d, Role rules %d: want both", len(r.cluster), len(r.lease))
	}
	return r
}

// grant is one resource and verb (and resource name, when the rule
// names some) of a shipped rule.
type grant struct {
	lease    bool // in the leader-election Role (else the ClusterRole)
	zone     bool // in the zone-heartbeat Role (nqos-zones)
	group    string
	resource string // may be resource/subresource
	verb     string
	name     string // one of the rule's resourceNames; "" for any
}

func (g grant) String() string {
	return fmt.Sprintf("%s %s/%s", g.verb, g.group, g.resource)
}

// grants lists every (resource, verb) the rules give, sorted.
func (r shippedRBAC) grants() []grant {
	var out []grant
	for i, rules := range [][]rbacv1.PolicyRule{r.cluster, r.lease, r.zone} {
		for _, rule := range rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						for _, n := range names {
							out = append(out, grant{lease: i == 1, zone: i == 2, group: g, resource: res, verb: v, name: n})
						}
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b grant) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// without is r minus one grant: every rule becomes one rule per grant.
func (r shippedRBAC) without(drop grant) shippedRBAC {
	out := shippedRBAC{leaseName: r.leaseName}
	for _, g := range r.grants() {
		if g == drop {
			continue
		}
		rule := rbacv1.PolicyRule{APIGroups: []string{g.group}, Resources: []string{g.resource}, Verbs: []string{g.verb}}
		if g.name != "" {
			rule.ResourceNames = []string{g.name}
		}
		switch {
		case g.lease:
			out.lease = append(out.lease, rule)
		case g.zone:
			out.zone = append(out.zone, rule)
		default:
			out.cluster = append(out.cluster, rule)
		}
	}
	return out
}

// shippedLease is the Lease name the shipped controller workloads use
// (--leader-elect-lease-name) and its Role names.
const shippedLease = "nqos-controller"

// forLease is r with the shipped Lease name in resourceNames replaced by
// lease, the name a test's replicas use ("" keeps r).
func (r shippedRBAC) forLease(lease string) shippedRBAC {
	if lease == "" {
		return r
	}
	out := shippedRBAC{cluster: r.cluster, zone: r.zone, leaseName: lease}
	for _, rule := range r.lease {
		rule = *rule.DeepCopy()
		for i, n := range rule.ResourceNames {
			if n == r.leaseName {
				rule.ResourceNames[i] = lease
			}
		}
		out.lease = append(out.lease, rule)
	}
	return out
}

// bindServiceAccount creates ServiceAccount name in nqos-system bound to
// a ClusterRole and a Role with the given rules, waits until RBAC
// enforces them and returns the path of a kubeconfig authenticating as
// it.
func bindServiceAccount(t testing.TB, srv *kubeapi.Server, w *world, name string, r shippedRBAC) string {
	t.Helper()
	ensureDeployNamespace(t, w)
	ctx := w.ctx
	subj := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: deployNS}}
	meta := metav1.ObjectMeta{Name: name}
	nsMeta := metav1.ObjectMeta{Name: name, Namespace: deployNS}
	rb := w.kube.RbacV1()
	steps := []func() error{
		func() error {
			_, err := w.kube.CoreV1().ServiceAccounts(deployNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: nsMeta}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := rb.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: r.cluster}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := rb.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subj,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{})
			return err
		},
		roleStep(w, deployNS, name, r.lease, nil),
		roleStep(w, deployNS, name, nil, subj),
	}
	if len(r.zone) > 0 {
		ensureNamespace(t, w, zonesNS)
		steps = append(steps, roleStep(w, zonesNS, name, r.zone, nil), roleStep(w, zonesNS, name, nil, subj))
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("RBAC for %s, step %d: %v", name, i, err)
		}
	}
	t.Cleanup(func() {
		_ = rb.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = rb.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	waitEnforced(t, w, name, r)
	cfg, err := srv.ServiceAccountConfig(ctx, deployNS, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeapi.WriteKubeconfig(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// roleStep creates Role name in ns with rules, or (subj set) its
// RoleBinding to subj.
func roleStep(w *world, ns, name string, rules []rbacv1.PolicyRule, subj []rbacv1.Subject) func() error {
	rb, m := w.kube.RbacV1(), metav1.ObjectMeta{Name: name, Namespace: ns}
	if subj == nil {
		return func() error {
			_, err := rb.Roles(ns).Create(w.ctx, &rbacv1.Role{ObjectMeta: m, Rules: rules}, metav1.CreateOptions{})
			return err
		}
	}
	return func() error {
		_, err := rb.RoleBindings(ns).Create(w.ctx, &rbacv1.RoleBinding{ObjectMeta: m, Subjects: subj,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}, metav1.CreateOptions{})
		return err
	}
}

// waitEnforced polls SubjectAccessReviews until every grant of r is
// allowed for the ServiceAccount (the authorizer's cache caught up).
func waitEnforced(t testing.TB, w *world, name string, r shippedRBAC) {
	t.Helper()
	user := serviceAccountUser(name)
	err := poll.Until(w.ctx, 15*time.Second, 50*time.Millisecond, "RBAC of "+user+" enforced", func(ctx context.Context) (bool, error) {
		for _, g := range r.grants() {
			res, sub, _ := strings.Cut(g.resource, "/")
			ra := &authorizationv1.ResourceAttributes{Group: g.group, Resource: res, Subresource: sub, Verb: g.verb, Name: g.name}
			if g.lease {
				ra.Namespace = deployNS
			}
			if g.zone {
				ra.Namespace = zonesNS
			}
			sar, err := w.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: ra}}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			if !sar.Status.Allowed {
				return false, poll.Retry("%s not yet allowed", g)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func serviceAccountUser(name string) string { return "system:serviceaccount:" + deployNS + ":" + name }

func ensureDeployNamespace(t testing.TB, w *world) { ensureNamespace(t, w, deployNS) }

func ensureNamespace(t testing.TB, w *world, ns string) {
	t.Helper()
	_, err := w.kube.CoreV1().Namespaces().Get(w.ctx, ns, metav1.GetOptions{})
	if err == nil {
		return
	}
	if _, err := w.kube.CoreV1().Namespaces().Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("namespace %s: %v", ns, err)
	}
}

// auditOf returns the denied requests of user and the grants its allowed
// requests used ("verb group/resource[/subresource]").
func auditOf(srv *kubeapi.Server, user string) (denied []string, used map[string]bool, err error) {
	evs, err := srv.AuditEvents()
	if err != nil {
		return nil, nil, err
	}
	used = map[string]bool{}
	for _, e := range evs {
		if e.User.Username != user || e.ObjectRef == nil || e.ResponseStatus == nil {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		key := fmt.Sprintf("%s %s/%s", e.Verb, e.ObjectRef.APIGroup, res)
		if e.ResponseStatus.Code == 403 {
			denied = append(denied, key+" ("+e.RequestURI+")")
			continue
		}
		used[key] = true
	}
	return denied, used, nil
}

// Informer modes: client-go 1.37 fills its caches with streaming
// watch-lists (watch with sendInitialEvents) where the API server
// supports them, and falls back to LIST where it does not (older
// servers, or the feature turned off).
const (
	watchListMode = ""
	listMode      = "KUBE_FEATURE_WatchListClient=false"
)

// runUnder runs the built controller as a new ServiceAccount with rules
// r through the worked example (informers in mode) and returns the
// failed checks and the grants its requests used. In strict mode every
// check runs; otherwise it stops at the first failure.
func runUnder(t *testing.T, srv *kubeapi.Server, r shippedRBAC, strict bool, mode string) (failed map[string]string, used map[string]bool) {
	nb := startNB(t)
	w := newWorld(t, srv, nb)
	id := newID(t)
	name := "nqos-controller-" + id
	lease := "nqos-" + id
	kubeconfig := bindServiceAccount(t, srv, w, name, r.forLease(lease))
	w.create(w.okepDocs()...)
	w.prepareNB(w.desired(), w.lsp("virt-launcher-late"))
	var env []string
	if mode != "" {
		env = []string{mode}
	}
	startProc(t, the.binary.get(t), name, env, controllerFlags(kubeconfig, nb.Addr(), "--leader-elect",
		"--leader-elect-lease-namespace="+deployNS, "--leader-elect-lease-name="+lease)...)
	user := serviceAccountUser(name)
	timeout := 30 * time.Second
	if !strict {
		timeout = 8 * time.Second
	}
	j := &judge{w: w, nbc: w.reader(), timeout: timeout, denied: func() error {
		denied, _, err := auditOf(srv, user)
		if err != nil {
			return err
		}
		if len(denied) > 0 {
			return fmt.Errorf("denied: %s", strings.Join(denied, ", "))
		}
		return nil
	}}
	failed = map[string]string{}
	steps := []struct {
		name string
		do   func()
		cond func(context.Context) (bool, error)
	}{
		{checkRows, nil, j.rows},
		{checkStatus, nil, j.status},
		{checkEvent, nil, j.eventsAtLeast(1, "tier-production", "tier-production-copy")},
		// The copy's deletion must be reconciled (its rows gone) before it
		// comes back, or the controller sees one unchanged object.
		{checkRows, func() { w.remove("NetworkQoS", "tier-production-copy") }, j.rows},
		{checkRepeatEvent, func() { w.create(w.nqosDoc("tier-production-copy", 60, "tier: production", 46)) },
			j.eventsAtLeast(2, "tier-production")},
		{checkLatePod, func() { w.create(w.podDoc("virt-launcher-late", "node-b", "tier: staging")) }, j.rows},
		{checkLease, nil, j.leaseRenewed(deployNS, lease, name)},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		if check, err := j.wait(s.name, s.cond); err != nil {
			failed[check] = err.Error()
			if !strict {
				return failed, nil
			}
		}
	}
	denied, used, err := auditOf(srv, user)
	if err != nil {
		t.Fatal(err)
	}
	if len(denied) > 0 {
		failed[checkNoDenial] = strings.Join(denied, ", ")
	}
	return failed, used
}

// The controller under the shipped ServiceAccount rules reconciles the
// worked example, writes status and events and holds its Lease, with
// either way of filling its caches; every shipped grant is used by one
// of them, and removing any one grant fails a named check (a list grant
// in the mode that lists).
func TestShippedRBAC(t *testing.T) {
	srv := the.cluster.get(t)
	requireOVN(t)
	rules := readRBAC(t)
	used := map[string]bool{}
	for _, mode := range []string{watchListMode, listMode} {
		t.Run("shipped "+modeName(mode), func(t *testing.T) {
			failed, u := runUnder(t, srv, rules, true, mode)
			if len(failed) > 0 {
				t.Fatalf("checks failed under the shipped rules: %s", failures(failed))
			}
			t.Logf("grants used: %v", keys(u))
			for k := range u {
				used[k] = true
			}
		})
	}
	for _, g := range rules.grants() {
		if g.zone {
			continue // the zone controllers' (TestZoneHeartbeatUnderShippedRBAC)
		}
		if !used[g.String()] {
			t.Errorf("grant %q is never used by the controller (extra); used: %v", g, keys(used))
		}
	}
	for _, g := range rules.grants() {
		if g.zone {
			continue
		}
		mode := watchListMode
		if g.verb == "list" {
			mode = listMode
		}
		t.Run("without "+g.String(), func(t *testing.T) {
			failed, _ := runUnder(t, srv, rules.without(g), false, mode)
			if len(failed) == 0 {
				t.Fatalf("removing %q fails no check (%s): it is not needed", g, modeName(mode))
			}
			t.Logf("removing %q fails: %s", g, failures(failed))
		})
	}
}

func modeName(mode string) string {
	if mode == listMode {
		return "(informers list)"
	}
	return "(informers stream watch-lists)"
}

// keys are m's keys, sorted.
func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
