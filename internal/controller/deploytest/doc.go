// Package deploytest holds the tests of the controller as it is deployed:
// the shipped manifests (config/deploy) decoded strictly and dry-run
// applied, the controller under the shipped ServiceAccount and RBAC rules
// on a real kube-apiserver (--authorization-mode=RBAC, audit log on), the
// Northbound over ssl: with certificates made in the test, two replicas
// of the built nqos-controller binary under leader election, the probes,
// SIGTERM, and the container image. It has no non-test code.
package deploytest
