//go:build nqos_bug_teardown

package seeded

// Active is the bug this build injects: TeardownReversed (tag nqos_bug_teardown).
const Active = TeardownReversed
