#!/usr/bin/env bash
# Mutation run: builds and runs a test command once per seeded bug
# of internal/seeded (build tag nqos_bug_<id>), after a baseline run without
# any bug tag that must pass, and prints a table "bug | caught | by".
# Exits 0 only when the baseline passes and every bug is caught.
#
#   MUTATION_CMD   the test command, run with `bash -c`; $TAG is the build
#                  tag ("" for the baseline), so write -tags=$TAG (with "=",
#                  which stays valid when TAG is empty). Its output may be
#                  `go test -json`, plain `go test` text and/or the scenario
#                  runner's "FAIL scenario <name>: <property>" lines.
#                  Default: chosen by MUTATION_SUITE.
#   MUTATION_SUITE scenarios (default): the declarative scenario suite of
#                  `make e2e-localnet` (nqos-sim run over scenarios/*.yaml,
#                  real testbed), so "by" names scenarios;
#                  unit: go test -count=1 -p 1 -json -tags=$TAG ./internal/... ./cmd/...
#                  all: both, one after the other.
#   MUTATION_BUGS  space-separated bug ids to run (default: every bug)
#   MUTATION_OUT   directory for the logs (default: a new /tmp/nqos-mutation.*)
#   GO             the go command (default: go)
#
# Exit status: 0 all caught, 1 some bug not caught (or its build failed),
# 2 baseline failed, 3 usage/tool error.
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
OUT="${MUTATION_OUT:-$(mktemp -d /tmp/nqos-mutation.XXXXXX)}"
export MUTATION_OUT="$OUT"
# the scenarios run the seeded nqos-sim and, as the controller process,
# the seeded nqos-controller beside it (its --controller-bin default)
scenario_cmd='d="$MUTATION_OUT/bin/${TAG:-baseline}" && "$GO" build -tags=$TAG -o "$d/nqos-sim" ./cmd/nqos-sim && "$GO" build -tags=$TAG -o "$d/nqos-controller" ./cmd/nqos-controller && "$d/nqos-sim" run --topology central --report-dir "$MUTATION_OUT/reports/${TAG:-baseline}"'
unit_cmd='"$GO" test -count=1 -p 1 -json -tags=$TAG ./internal/... ./cmd/...'
case "${MUTATION_SUITE:-scenarios}" in
  scenarios) default_cmd=$scenario_cmd ;;
  unit) default_cmd=$unit_cmd ;;
  all) default_cmd="rc=0; $scenario_cmd || rc=\$?; $unit_cmd || rc=\$?; exit \$rc" ;;
  *)
    echo "mutation: MUTATION_SUITE='${MUTATION_SUITE}': want scenarios, unit or all" >&2
    exit 3
    ;;
esac
MUTATION_CMD="${MUTATION_CMD:-$default_cmd}"
export GO
mkdir -p "$OUT/bin"
# Tests that drive this script themselves skip inside a mutation run.
export NQOS_MUTATION_RUN=1

"$GO" build -o "$OUT/bin/listbugs" ./internal/seeded/cmd/listbugs
"$GO" build -o "$OUT/bin/failures" ./internal/seeded/cmd/failures

declare -A known=()
all=()
while IFS=$'\t' read -r id _tag _desc; do
  known[$id]=1
  all+=("$id")
done < <("$OUT/bin/listbugs")

bugs=("${all[@]}")
if [[ -n "${MUTATION_BUGS:-}" ]]; then
  read -r -a bugs <<<"$MUTATION_BUGS"
  for id in "${bugs[@]}"; do
    if [[ -z "${known[$id]:-}" ]]; then
      echo "mutation: unknown bug id '$id' in MUTATION_BUGS (known: ${all[*]})" >&2
      exit 3
    fi
  done
fi

# run_cmd TAG NAME: runs MUTATION_CMD with TAG, logs to $OUT/NAME.log,
# writes the parsed failures to $OUT/NAME.failures, prints the exit status.
run_cmd() {
  local tag=$1 name=$2 rc=0
  echo "mutation: running ${name} (tags='${tag}'), log ${OUT}/${name}.log" >&2
  TAG="$tag" bash -c "$MUTATION_CMD" >"$OUT/$name.log" 2>&1 </dev/null || rc=$?
  "$OUT/bin/failures" <"$OUT/$name.log" >"$OUT/$name.failures"
  echo "$rc"
}

# names KIND NAME: the failures of one kind ("fail" or "build"), one a line.
names() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$OUT/$2.failures"; }

# summary NAME: the failures grouped by top-level test ("qos.TestGolden
# (7)" for seven failing subtests), at most four groups, then "(+N more)".
summary() {
  names fail "$1" | awk '
    { k = $0; if (k !~ /^scenario /) sub(/\/.*/, "", k)
      if (!(k in count)) order[++n] = k
      count[k]++ }
    END { for (i = 1; i <= n && i <= 4; i++) {
            k = order[i]; printf "%s%s", (i > 1 ? ", " : ""), k
            if (count[k] > 1) printf " (%d)", count[k] }
          if (n > 4) printf " (+%d more)", n - 4 }'
}

rc=$(run_cmd "" baseline)
if [[ "$rc" != 0 || -s "$OUT/baseline.failures" ]]; then
  echo "mutation: baseline (no bug tag) failed with exit status $rc; the table would be meaningless:" >&2
  sed 's/^/  /' "$OUT/baseline.failures" >&2
  echo "  log: $OUT/baseline.log" >&2
  exit 2
fi

rows=()
uncaught=0
for id in "${bugs[@]}"; do
  rc=$(run_cmd "nqos_bug_$id" "$id")
  if [[ -n "$(names build "$id")" ]]; then
    rows+=("$id|BUILD FAILED|$(names build "$id" | paste -sd, -)")
    uncaught=$((uncaught + 1))
  elif [[ -n "$(names fail "$id")" ]]; then
    rows+=("$id|yes|$(summary "$id")")
  elif [[ "$rc" != 0 ]]; then
    rows+=("$id|no|exit status $rc but no failing test or scenario named (see $id.log)")
    uncaught=$((uncaught + 1))
  else
    rows+=("$id|no|-")
    uncaught=$((uncaught + 1))
  fi
done

printf '%-9s | %-12s | %s\n' bug caught by
printf '%s\n' '----------+--------------+----------------------------------------'
for row in "${rows[@]}"; do
  IFS='|' read -r id caught by <<<"$row"
  printf '%-9s | %-12s | %s\n' "$id" "$caught" "$by"
done
echo "logs and full failure lists: $OUT"
if ((uncaught > 0)); then
  echo "mutation: $uncaught of ${#bugs[@]} seeded bugs not caught" >&2
  exit 1
fi
echo "mutation: all ${#bugs[@]} seeded bugs caught"
