package verify

import "github.com/nqos/nqos/internal/intent"

// The derivation's types, shared with the compiler-only fabric view.
type (
	// Family is an IP family: "v4" or "v6".
	Family = intent.Family
	// Class is one kind of traffic a VM sends.
	Class = intent.Class
	// Intent is the compiled intent of a class.
	Intent = intent.Intent
	// Shadowed is a rule that never wins a packet of a VM.
	Shadowed = intent.Shadowed
)
