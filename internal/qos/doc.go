// Package qos owns the pure NetworkQoS compiler: it turns NetworkQoS,
// Namespace, Pod, NetworkAttachmentDefinition and ClusterUserDefinedNetwork
// objects into the desired OVN Northbound Port_Group, Address_Set and QoS
// rows of OKEP-6815 (source matched by port-group membership, never by IP),
// the Accepted condition of every NetworkQoS, and warnings. It also owns the
// naming rules shared with upstream OVN-Kubernetes, the legacy-match
// rewrite used by the startup migration, and the strict manifest decoder.
// Nothing here does I/O beyond reading manifests from an io.Reader. The
// compiler-side seeded bugs of internal/seeded are injected here,
// each behind a constant `if seeded.Active == ...` that only an
// nqos_bug_<id> build tag makes reachable.
package qos
