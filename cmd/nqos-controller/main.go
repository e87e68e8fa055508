// Command nqos-controller is the NetworkQoS controller: it reconciles
// k8s.ovn.org/v1alpha1 NetworkQoS objects into OVN Northbound rows
// (OKEP-6815). Run with --help for its flags.
package main

import (
	"os"

	"github.com/nqos/nqos/internal/controller/app"
)

func main() { os.Exit(app.Main(os.Args[1:], os.Stderr)) }
