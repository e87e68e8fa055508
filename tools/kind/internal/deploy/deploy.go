package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// The TLS Secret the central Deployment mounts.
const (
	secretName = "nqos-nb-client-tls"
	// apiServerPort is kubeadm's secure port on the control-plane node.
	apiServerPort = "6443"
)

// target is the cluster as Deploy and Undeploy address it.
type target struct {
	kube  *kube
	cp    nodes.Node
	nodes []nodes.Node
	cpIP  net.IP // the control-plane node's InternalIP
	repo  string
}

func open(ctx context.Context, name, kubeconfig, repo string) (*target, error) {
	repo, err := findRepo(repo)
	if err != nil {
		return nil, err
	}
	cp, all, err := kindnode.List(cluster.NewProvider(cluster.ProviderWithDocker()), name)
	if err != nil {
		return nil, err
	}
	k, err := newKube(kubeconfig)
	if err != nil {
		return nil, err
	}
	n, err := k.cs.CoreV1().Nodes().Get(ctx, cp.String(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("node %s of cluster %s: %w", cp, name, err)
	}
	for _, a := range n.Status.Addresses {
		if ip := net.ParseIP(a.Address); a.Type == corev1.NodeInternalIP && ip.To4() != nil {
			return &target{kube: k, cp: cp, nodes: all, cpIP: ip, repo: repo}, nil
		}
	}
	return nil, fmt.Errorf("node %s of cluster %s has no IPv4 InternalIP", cp, name)
}

// Deploy deploys nqos-controller into cluster s.Name as config/deploy
// describes it for the cluster's topology: on interconnect per-node mode
// (deployZones), on central the central mode: image (built per s.Build, loaded into every
// node), CRDs, namespace, RBAC, the Northbound ssl listener and its PKI,
// the client TLS Secret and the Deployment with the KinD patch. It waits
// until the rollout is done and a pod of it holds the Lease, and prints
// each step, with what changed and how long it took, to out. A second run
// updates what differs and leaves the rest.
func Deploy(ctx context.Context, s Spec, out io.Writer) error {
	if err := s.validate(); err != nil {
		return err
	}
	t, err := open(ctx, s.Name, s.Kubeconfig, s.Repo)
	if err != nil {
		return err
	}
	d, err := readDeployment(filepath.Join(t.repo, deploymentFile))
	if err != nil {
		return err
	}
	step := stepper(out)
	id, err := t.ensureImage(ctx, s, out, step)
	if err != nil {
		return err
	}
	if err := t.applyBase(ctx, out, step); err != nil {
		return err
	}
	topo, err := t.topology(ctx)
	if err != nil {
		return err
	}
	if topo == topologyInterconnect {
		nqos, err := t.ovnkubeNetworkQoS(ctx)
		if err != nil {
			return err
		}
		return t.deployZones(ctx, s, id, nqos, out, step)
	}
	secret, err := t.nbTLS(ctx, s, d.Namespace, out, step)
	if err != nil {
		return err
	}
	ovnkubeNQoS, err := t.ovnkubeNetworkQoS(ctx)
	if err != nil {
		return err
	}
	if err := patchDeployment(d, kindPatch{
		APIServerHost: t.cpIP.String(), APIServerPort: apiServerPort,
		NBAddress: fmt.Sprintf("ssl:%s:%d", t.cpIP, NBSSLPort),
		Image:     s.Image, ImageID: id, TLSHash: secretHash(secret), Replicas: int32(s.Replicas),
		OVNKubeNetworkQoS: ovnkubeNQoS,
	}); err != nil {
		return fmt.Errorf("%s: %w", deploymentFile, err)
	}
	what, name, err := t.kube.applyTyped(ctx, d, "apps/v1", "Deployment")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %s (%s, KinD patch: --nb-address=ssl:%s:%d, KUBERNETES_SERVICE_HOST=%s, %s=%t, image %s)\n",
		what, name, deploymentFile, t.cpIP, NBSSLPort, t.cpIP, ovnkubeNetworkQoSFlag, ovnkubeNQoS, s.Image)
	lease := argValue(container(d, containerName).Args, "--leader-elect-lease-name", "nqos-controller")
	wctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	if err := t.rollout(ctx, wctx, d, lease, func() { step("rollout") }, out); err != nil {
		return err
	}
	connectionStatus(ctx, t.cp, t.cpIP, out)
	return nil
}

// rollout waits, within wctx, until Deployment d has rolled out and its
// Lease is held (diagnosing it when not), calls done, and prints the
// ready pods and the Lease's holder.
func (t *target) rollout(ctx, wctx context.Context, d *appsv1.Deployment, lease string, done func(), out io.Writer) error {
	r, err := t.kube.waitRollout(wctx, d.Namespace, d.Name, lease)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, t.kube.diagnose(ctx, d.Namespace, d.Name))
	}
	done()
	fmt.Fprintf(out, "deployment %s/%s rolled out: ready pods %s; Lease %s/%s held by %s\n",
		d.Namespace, d.Name, strings.Join(r.pods, " "), d.Namespace, lease, r.holder)
	return nil
}

// stepper returns a function that prints how long the step just ended took.
func stepper(out io.Writer) func(what string) {
	last := time.Now()
	return func(what string) {
		now := time.Now()
		fmt.Fprintf(out, "  %s: %.1fs\n", what, now.Sub(last).Seconds())
		last = now
	}
}

// ensureImage builds s.Image if s.Build asks, loads it into every node
// that lacks this build of it, and returns its ID.
func (t *target) ensureImage(ctx context.Context, s Spec, out io.Writer, step func(string)) (string, error) {
	id := imageID(ctx, s.Image)
	if s.Build == BuildAlways || (s.Build == BuildMissing && id == "") {
		if err := buildImage(ctx, t.repo, s.Image, s.BuilderRoot, out); err != nil {
			return "", err
		}
		if id = imageID(ctx, s.Image); id == "" {
			return "", fmt.Errorf("image %s: not in the engine after its build", s.Image)
		}
		size, _ := docker(ctx, "image", "inspect", "--format", "{{.Size}}", s.Image)
		fmt.Fprintf(out, "built image %s %s (%s bytes)\n", s.Image, id, size)
		step("image build")
	}
	if id == "" {
		return "", fmt.Errorf("image %s: not in the engine at DOCKER_HOST=%s (build it: hack/kind/deploy.sh, or -build missing)", s.Image, os.Getenv("DOCKER_HOST"))
	}
	loaded, err := loadImage(ctx, t.nodes, s.Image, id)
	if err != nil {
		return "", err
	}
	if len(loaded) == 0 {
		fmt.Fprintf(out, "image %s %s already in every node\n", s.Image, id)
	} else {
		fmt.Fprintf(out, "loaded image %s %s into %s\n", s.Image, id, strings.Join(loaded, " "))
		step("image load")
	}
	return id, nil
}

// applyBase applies the CRDs (and waits until they are Established), the
// namespace and the RBAC.
func (t *target) applyBase(ctx context.Context, out io.Writer, step func(string)) error {
	crds, err := readDir(filepath.Join(t.repo, crdDir))
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, f := range []string{namespaceFile, rbacFile} {
		o, err := readObjects(filepath.Join(t.repo, f))
		if err != nil {
			return err
		}
		objs = append(objs, o...)
	}
	for _, u := range append(crds, objs...) {
		what, err := t.kube.apply(ctx, u)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", what, ref(u))
	}
	ectx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := t.kube.waitEstablished(ectx, crds); err != nil {
		return err
	}
	step("CRDs, namespace, RBAC")
	return nil
}

// nbTLS gives the Northbound its ssl listener (PKI in the control-plane
// node, SSL and Connection rows) and applies the client's Secret, which
// it returns.
func (t *target) nbTLS(ctx context.Context, s Spec, ns string, out io.Writer, step func(string)) (*corev1.Secret, error) {
	p, fresh, err := nodePKI(ctx, t.cp, t.cpIP, time.Now())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "Northbound PKI in node %s:%s: %s\n", t.cp, pkiDir, map[bool]string{true: "issued", false: "kept"}[fresh])
	changed, err := configureSSL(ctx, t.cp, t.cpIP)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "Northbound ssl listener %s (server certificate %s): %s\n", sslTarget(t.cpIP), serverName,
		map[bool]string{true: "configured", false: "unchanged"}[changed])
	ca := p.CACert
	if s.NBCAFile != "" {
		if ca, err = os.ReadFile(s.NBCAFile); err != nil {
			return nil, fmt.Errorf("CA file %s: %w", s.NBCAFile, err)
		}
		fmt.Fprintf(out, "Secret %s gets ca.crt from %s, not the Northbound's CA\n", secretName, s.NBCAFile)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.key": p.ClientKey, "tls.crt": p.ClientCert, "ca.crt": ca},
	}
	what, name, err := t.kube.applyTyped(ctx, sec, "v1", "Secret")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s %s (tls.key, tls.crt: client %s; ca.crt)\n", what, name, clientName)
	step("Northbound TLS")
	return sec, nil
}

// secretHash digests the Secret's data in key order.
func secretHash(s *corev1.Secret) string {
	h := sha256.New()
	for _, k := range []string{"ca.crt", "tls.crt", "tls.key"} {
		fmt.Fprintf(h, "%s=%d:", k, len(s.Data[k]))
		h.Write(s.Data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
