//go:build nqos_bug_partial

package seeded

// Active is the bug this build injects: PartialRejected (tag nqos_bug_partial).
const Active = PartialRejected
