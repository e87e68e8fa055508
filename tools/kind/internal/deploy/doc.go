// Package deploy owns the deployment of nqos-controller into an nqos KinD
// cluster the way config/deploy/README.md tells users to deploy it: the
// image from build/Containerfile (built on demand, loaded into every
// node's containerd), the CRDs of config/crd, the namespace and RBAC of
// config/deploy, the Northbound client TLS Secret, and the central-mode
// Deployment with the few changes a KinD cluster without kube-proxy and
// CoreDNS needs (patch.go). It also owns the PKI of the Northbound's ssl
// listener (a CA, the server certificate ovnnb, the client certificate)
// and that listener's Connection and SSL rows in the control-plane node,
// and the wait until the rollout is done and one replica holds the Lease
// and answers /readyz as the leader.
package deploy
