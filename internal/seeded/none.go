//go:build !nqos_bug_burst && !nqos_bug_dscp1 && !nqos_bug_except && !nqos_bug_noretry && !nqos_bug_partial && !nqos_bug_prio20 && !nqos_bug_srcip && !nqos_bug_teardown

package seeded

// Active is None in a normal build: no bug is injected.
const Active = None
