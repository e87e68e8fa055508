// Package coexist owns the coexistence watch of a KinD cluster where
// OVN-Kubernetes' own NetworkQoS controller runs beside nqos: it waits
// until the Northbound holds NetworkQoS rows of both controllers, then for
// a fixed window monitors the QoS, Port_Group and Address_Set tables
// (ovsdb-client monitor, one per table) and the NetworkQoS objects
// (kubectl get --watch), and judges the window: zero rows of either owner
// inserted, changed or deleted, zero owner takeovers, zero status changes,
// and both owners' rows present throughout. A monitor that did not deliver
// its initial state is a failed check, never an empty window.
package coexist
