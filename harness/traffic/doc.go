// Package traffic owns the traffic drivers of the harness: iperf3 servers
// and clients run in network namespaces (JSON output decoded into typed
// structs) and a raw packet injector that sends crafted, sequence-numbered
// frames from inside a guest namespace through an AF_PACKET socket.
package traffic
