//go:build nqos_bug_noretry

package seeded

// Active is the bug this build injects: NoLateLSPRetry (tag nqos_bug_noretry).
const Active = NoLateLSPRetry
