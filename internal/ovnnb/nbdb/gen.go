// Package nbdb holds the libovsdb models generated from the OVN Northbound
// schema shipped with Debian 12 (OVN 23.03, schema 7.0.0). Regenerate with
// `go generate ./internal/ovnnb/nbdb` after replacing ovn-nb.ovsschema.
package nbdb

//go:generate go run github.com/ovn-kubernetes/libovsdb/cmd/modelgen --extended -p nbdb -o . ovn-nb.ovsschema
