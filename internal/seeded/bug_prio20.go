//go:build nqos_bug_prio20

package seeded

// Active is the bug this build injects: PriorityX20 (tag nqos_bug_prio20).
const Active = PriorityX20
