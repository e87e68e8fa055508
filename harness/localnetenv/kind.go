package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/internal/controller/app"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// On a KinD cluster (Provisioner.Kind) the testbed is the cluster's: its
// API server, kubelets running the launcher pods, the nqos-cni plugin
// plugging their NICs, OVN in its nodes and the controller deployed in
// it from config/deploy (make kind-deploy): on an interconnect cluster the
// DaemonSet (one controller per node on its zone's NB) and the status
// aggregator, on a central one the Deployment. What the harness cannot do
// there (restart the cluster's daemons or the in-cluster controller as a
// process, migrate or re-plug a pod) is reported as not supported.

// backendKind names the KinD backend in results.
const backendKind = "kind"

// The in-cluster controller: config/deploy/deployment-central.yaml on a
// central cluster, daemonset-node.yaml and aggregator.yaml on an
// interconnect one.
const (
	controllerNamespace  = "nqos-system"
	controllerDeployment = "nqos-controller"
	controllerDaemonSet  = "nqos-controller-node"
	aggregatorDeployment = "nqos-aggregator"
)

// ovnkubeNamespace holds the lease of the cluster's ovnkube (nqos-kind up
// -lsp ovnkube).
const ovnkubeNamespace = "ovn-kubernetes"

// systemNamespaces are the namespaces of the cluster itself and of the
// deployed controller (its own and its zones' heartbeat Leases with
// their Role): everything else a scenario made is deleted at its end.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease", controllerNamespace,
	app.DefaultHeartbeatNamespace, ovnkubeNamespace}

// Lacks declares what the environments of the backend cannot do, each
// with why: the runner decides before the boot which scenarios are not
// supported.
func (p *Provisioner) Lacks() map[harness.Capability]string { return p.backend().lacks() }

// kindBackend runs every scenario on a KinD cluster with the controller
// deployed in it.
type kindBackend struct{ cluster *localnet.KindCluster }

// Why the KinD backend cannot run a step.
const (
	whyControllerProcess = "the scenario runs the controller as a process of its own (restartController, upgrade or controller.boot false); on the cluster it is the deployed one"
	whyMigration         = "live migration: the launcher pods are the kubelets' and no VM handler moves them between nodes"
	whyLauncherRestart   = "a launcher restart: the guest is the launcher pod's own namespace, which a new pod does not keep"
	whyDaemonRestart     = "restarting an OVS or OVN daemon: the OVS and OVN daemons are the cluster nodes'"
	whyZonesKind         = "one zone's controller: the cluster's controller is the one deployed from config/deploy"
	whyDHCPOVNKube       = "the cluster's ovnkube makes the localnet switches from the NADs and refuses one with an ipam key (\"IPAM key is not supported. Use OVN-K provided IPAM via the `subnets` attribute\")"
)

func (b kindBackend) lacks() map[harness.Capability]string {
	lacks := map[harness.Capability]string{
		harness.CapControllerProcess: whyControllerProcess,
		harness.CapMigration:         whyMigration,
		harness.CapLauncherRestart:   whyLauncherRestart,
		harness.CapDaemonRestart:     whyDaemonRestart,
		harness.CapZones:             whyZonesKind,
	}
	if b.cluster.LSPs == localnet.KindLSPOVNKube {
		lacks[harness.CapDHCPNetwork] = whyDHCPOVNKube
	}
	return lacks
}

// check rejects a scenario that runs the controller as a process (the
// runner decided so before the boot; this is reached when it is
// bypassed).
func (kindBackend) check(sc *scenarios.Scenario) error {
	if sc.ControllerProcess() {
		return unsupported("the scenario runs the controller as a process of its own; on the cluster it is the deployed one")
	}
	if sc.LabelsNodes() {
		return unsupported("the scenario labels its nodes (topology.nodes); the cluster's Nodes carry the cluster's own labels")
	}
	return nil
}

// configure runs the testbed on the cluster, in the cluster's topology.
func (b kindBackend) configure(s *localnet.Spec) {
	s.Kind = b.cluster
	s.Topology = b.cluster.Topology
}

// startController waits for the deployed controller of the cluster's
// topology: the per-node DaemonSet and the aggregator on interconnect,
// the central Deployment otherwise.
func (b kindBackend) startController(ctx context.Context, e *testbedEnv, _ *slog.Logger) error {
	if b.cluster.Topology == localnet.Interconnect {
		if err := e.waitInClusterDaemonSet(ctx); err != nil {
			return err
		}
		return e.waitInClusterDeployment(ctx, aggregatorDeployment)
	}
	return e.waitInClusterDeployment(ctx, controllerDeployment)
}

func (kindBackend) env(e *testbedEnv) harness.Env { return kindEnv{e} }

// kindEnv is the environment on a KinD cluster: the operations it cannot
// run are not supported (the runner decided so before the boot; these
// are reached when it is bypassed).
type kindEnv struct{ *testbedEnv }

// Migrate is not supported: whyMigration.
func (kindEnv) Migrate(context.Context, *scenarios.VM, *scenarios.Migrate, *scenarios.Probe) (lifeprobe.Outcome, error) {
	return lifeprobe.Outcome{}, unsupported(whyMigration)
}

// RestartLauncher is not supported: whyLauncherRestart.
func (kindEnv) RestartLauncher(context.Context, *scenarios.VM, *scenarios.Probe) (lifeprobe.Outcome, error) {
	return lifeprobe.Outcome{}, unsupported(whyLauncherRestart)
}

// RestartDaemon is not supported: whyDaemonRestart.
func (kindEnv) RestartDaemon(_ context.Context, r *scenarios.RestartDaemon, _ *scenarios.VM, _ *scenarios.Probe) (lifeprobe.Outcome, error) {
	return lifeprobe.Outcome{}, unsupported("restarting " + r.Daemon + ": the OVS and OVN daemons are the cluster nodes'")
}

// restartControllerProc is not supported: the controller is the deployed one.
func (kindEnv) RestartController(context.Context, harness.ControllerRestart, *scenarios.VM, *scenarios.Probe) (harness.ControllerResult, error) {
	return harness.ControllerResult{}, unsupported("restarting the controller as a process: on the cluster it is the deployed Deployment")
}

// Upgrade is not supported: the controller is the deployed one.
func (kindEnv) Upgrade(context.Context, []*scenarios.Manifest, *scenarios.VM, *scenarios.Probe) (harness.ControllerResult, error) {
	return harness.ControllerResult{}, unsupported("an upgrade from legacy rows: the controller is the deployed one, not a process of the harness")
}

// unsupported is the error of a step the KinD backend cannot run.
func unsupported(what string) error {
	return &harness.NotSupportedError{Backend: backendKind, What: what}
}

// asUnsupported turns a testbed's ErrNotSupported into the harness's.
func asUnsupported(err error) error {
	if errors.Is(err, localnet.ErrNotSupported) {
		return &harness.NotSupportedError{Backend: backendKind, What: err.Error()}
	}
	return err
}

// waitInClusterDeployment waits until the deployed Deployment name has
// an available replica.
func (e *testbedEnv) waitInClusterDeployment(ctx context.Context, name string) error {
	return waitInCluster(ctx, "deployment", name, "in-cluster "+name+" available", e.kube.AppsV1().Deployments(controllerNamespace).Get,
		func(d *appsv1.Deployment) bool { return d.Status.AvailableReplicas > 0 })
}

// waitInClusterDaemonSet waits until the per-node controller runs
// available on every node of the testbed.
func (e *testbedEnv) waitInClusterDaemonSet(ctx context.Context) error {
	return waitInCluster(ctx, "daemonset", controllerDaemonSet, "in-cluster per-node controllers available", e.kube.AppsV1().DaemonSets(controllerNamespace).Get,
		func(d *appsv1.DaemonSet) bool {
			s := d.Status
			return s.DesiredNumberScheduled > 0 && s.NumberAvailable == s.DesiredNumberScheduled && s.UpdatedNumberScheduled == s.DesiredNumberScheduled
		})
}

// waitInCluster polls (get) the deployed controller object kind name in
// controllerNamespace until ready says it is available.
func waitInCluster[T any](ctx context.Context, kind, name, what string, get func(context.Context, string, metav1.GetOptions) (T, error), ready func(T) bool) error {
	return localnet.Poll(ctx, 60*time.Second, what, func(ctx context.Context) (bool, error) {
		obj, err := get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("%s %s/%s: not found: deploy the controller first (make kind-deploy)", kind, controllerNamespace, name)
		}
		if err != nil {
			return false, fmt.Errorf("%s %s/%s: %w", kind, controllerNamespace, name, err)
		}
		return ready(obj), nil
	})
}

// clear deletes what the scenario made in the cluster (nothing before
// the API and the zones' NBs were connected): every NetworkQoS and
// ClusterUserDefinedNetwork and every namespace but the system ones,
// waits until the namespaces are gone (their pods with them: the
// kubelets ran the CNI DEL) and until the controller has removed every
// row it owned, in every zone.
func (kindBackend) clear(ctx context.Context, e *testbedEnv) error {
	if e.kube == nil || len(e.zones) == 0 {
		return nil
	}
	var errs []error
	nqos := e.dyn.Resource(v1alpha1.GroupVersionResource())
	if err := nqos.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("delete NetworkQoS objects: %w", err))
	}
	if err := e.dyn.Resource(udnv1.GroupVersionResource()).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("delete ClusterUserDefinedNetworks: %w", err))
	}
	nss, err := e.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list namespaces: %w", err))...)
	}
	for _, ns := range nss.Items {
		if slices.Contains(systemNamespaces, ns.Name) || ns.DeletionTimestamp != nil {
			continue
		}
		if err := e.kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete namespace %s: %w", ns.Name, err))
		}
	}
	errs = append(errs, localnet.Poll(ctx, 2*time.Minute, "scenario namespaces gone", func(ctx context.Context) (bool, error) {
		nss, err := e.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return !slices.ContainsFunc(nss.Items, func(ns corev1.Namespace) bool { return !slices.Contains(systemNamespaces, ns.Name) }), nil
	}))
	errs = append(errs, localnet.Poll(ctx, time.Minute, "controller-owned NB rows gone", func(ctx context.Context) (bool, error) {
		rows, err := e.Rows(ctx)
		return err == nil && len(rows.PortGroups)+len(rows.AddressSets)+len(rows.QoS) == 0, err
	}))
	return errors.Join(errs...)
}
