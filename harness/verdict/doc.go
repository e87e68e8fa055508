// Package verdict decides every PASS/FAIL the scenario suite prints. A
// verdict is two-sided: it passes iff Got lies in [Want-Below, Want+Above]
// with the tolerance stated, and it carries the number of samples the
// figure is made of. The property names (the "FAIL scenario <name>:
// <property>" vocabulary that hack/mutation.sh reads) are the constants of
// this package. Package capture only measures (counts, token-bucket
// excess, rate series); the checks on those measurements live here: the
// DSCP mark, the policing bound and floor (per flow and per shared
// meter), meter accounting, delivery, throughput, and the lifecycle
// probes' unmarked count, loss and marking gap.
package verdict
