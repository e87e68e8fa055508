//go:build nqos_bug_srcip

package seeded

// Active is the bug this build injects: SourceByIP (tag nqos_bug_srcip).
const Active = SourceByIP
