//go:build nqos_bug_dscp1

package seeded

// Active is the bug this build injects: DSCPOffByOne (tag nqos_bug_dscp1).
const Active = DSCPOffByOne
