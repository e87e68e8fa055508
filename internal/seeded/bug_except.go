//go:build nqos_bug_except

package seeded

// Active is the bug this build injects: ExceptDropped (tag nqos_bug_except).
const Active = ExceptDropped
