//go:build nqos_bug_burst

package seeded

// Active is the bug this build injects: BurstUnits (tag nqos_bug_burst).
const Active = BurstUnits
