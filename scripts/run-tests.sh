#!/usr/bin/env bash
# Runs the whole test suite (`make test`, `.ci/run`):
#   1. static checks (typecheck, lint, the contract against the released document), each counted as one test;
#   2. pass "pglite":   vitest with TEST_DATABASE=pglite (in-memory PGlite per test file);
#      Each of its test apps writes the page contents its database stored into a corpus (LIVE_CORPUS_DIR,
#      test/support/live-corpus.ts);
#   3. pass "corpus":   test/live/round-trip.corpus.test.ts alone (LIVE_CORPUS_FROM), the live editor's schema
#      over that corpus: every content round-trips or opens in the HTML text area with a reason. An empty corpus
#      fails, unless the arguments chose files that store no page (then the pass is one skipped test);
#   4. pass "postgres": vitest with TEST_DATABASE=postgres and
#      TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:PORT/postgres, against a
#      throw-away PostgreSQL 15 server started here and always stopped and deleted.
# Extra arguments are passed to vitest in the pglite and postgres passes (e.g. a file filter), not to the corpus's.
# `--fast` first (`make test-fast`, the loop while editing): the typecheck, then the PGlite pass without the heavy
# files (fuzzing, crash, answer size, the browser, several processes, memory, code samples) and the corpus pass over
# what it stored; no lint, no PostgreSQL pass. It is not the whole truth: `make test` is, and CI runs that.
# The last line printed is always `N passed, N failed, N skipped` (every pass and
# the static checks); the exit status is non-zero if anything failed or a pass
# could not run. Without PostgreSQL the postgres pass is skipped with a NOTICE,
# unless CI is set (non-empty), where that is an error.
# The postgres pass also gets a throw-away Redis (scripts/lib/redis.sh, TEST_REDIS_URL=redis://127.0.0.1:PORT) for
# the test of two processes sharing live documents (test/browser/live-two-processes.test.ts); without one that test
# is skipped with a NOTICE, and with CI set that is an error too.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Fast static checks run before the passes: "name|command".
STATIC_CHECKS=(
  "typecheck|npm run -s typecheck"
  "lint|npm run -s lint"
  "contract|node scripts/check-contract.ts"
)

FAST=0
if [[ ${1:-} == --fast ]]; then
  FAST=1
  shift
  STATIC_CHECKS=("typecheck|npm run -s typecheck")
fi
VITEST_ARGS=("$@")
FILTERED=$#   # arguments given: the passes may run only some files
# the files `--fast` leaves out: each starts servers as processes, fuzzes for a while, drives a browser, runs
# every code sample of the API reference with curl and node (about a minute), or loads one server for minutes (the
# soak, SOAK_SECONDS)
HEAVY_FILES=(
  test/api/fuzz.test.ts test/api/fuzz-outside-api.test.ts test/api/crash.test.ts test/api/two-processes.test.ts
  test/api/answer-size.test.ts test/api/attachment-memory.test.ts test/api/code-samples.test.ts 'test/browser/**'
  test/soak/soak.test.ts
)
if [[ $FAST -eq 1 ]]; then
  for file in "${HEAVY_FILES[@]}"; do VITEST_ARGS+=(--exclude "$file"); done
fi

log() { printf '[run-tests] %s\n' "$*"; }

# ---------------------------------------------------------------- state & cleanup
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
SUMMARY=()
WORK_DIR=""
# PostgreSQL state (PG_DIR, PG_BINDIR, PG_STARTED, PG_PID, PG_PORT, POLICY_RC_CREATED) and its functions (start_pg,
# stop_pg, resolve_pg_bindir, ...) are shared with the benchmark.
source "$ROOT/scripts/lib/postgres.sh"
# ensure_chromium: Debian's Chromium for the browser test (test/browser/)
source "$ROOT/scripts/lib/chromium.sh"
# ensure_redis, start_redis, stop_redis, redis_cleanup: Redis for the postgres pass (REDIS_SERVER, REDIS_URL_STARTED, ...)
source "$ROOT/scripts/lib/redis.sh"
CHILD_PID=""

# run_child CMD...: runs CMD and returns its status. It runs in the background and is
# waited for, so that a signal to this script is handled at once (a foreground
# child would delay the trap until it ends) and forwarded to it by cleanup.
run_child() {
  local rc=0
  "$@" &
  CHILD_PID=$!
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=""
  return $rc
}

stop_child() {
  if [[ -n $CHILD_PID ]] && kill -0 "$CHILD_PID" 2>/dev/null; then
    kill -TERM "$CHILD_PID" 2>/dev/null
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$CHILD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CHILD_PID" 2>/dev/null
    wait "$CHILD_PID" 2>/dev/null
  fi
  CHILD_PID=""
}

cleanup() {
  set +e
  stop_child
  redis_cleanup
  stop_pg
  if [[ $POLICY_RC_CREATED -eq 1 ]]; then
    rm -f /usr/sbin/policy-rc.d
    POLICY_RC_CREATED=0
  fi
  [[ -n $WORK_DIR ]] && rm -rf "$WORK_DIR"
  WORK_DIR=""
}
trap cleanup EXIT
trap 'echo; log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/run-tests.XXXXXX")"

# ---------------------------------------------------------------- dependencies
# npm ci rewrites node_modules/.package-lock.json: it is the "installed at" stamp
# (the node_modules directory's own mtime does not change when files inside do).
if [[ ! -d node_modules || ! -e node_modules/.package-lock.json \
      || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "node_modules missing or older than package-lock.json: npm ci on Node 24 (scripts/install-deps.sh)"
  bash scripts/install-deps.sh </dev/null
fi
NODE="$ROOT/node_modules/.bin/node"   # Node 24 from the node@24 devDependency
if [[ ! -x $NODE ]]; then
  log "ERROR: $NODE not found (is the node@24 devDependency installed?)"
  exit 1
fi
# `#!/usr/bin/env node` scripts (vitest, tsc, npm itself) must get Node 24, not the system node.
export PATH="$ROOT/node_modules/.bin:$PATH"

# ---------------------------------------------------------------- static checks
for entry in "${STATIC_CHECKS[@]}"; do
  name="${entry%%|*}"
  read -r -a cmd <<<"${entry#*|}"
  log "static check '$name': ${cmd[*]}"
  rc=0
  run_child "${cmd[@]}" </dev/null || rc=$?
  if [[ $rc -eq 0 ]]; then
    TOTAL_PASSED=$((TOTAL_PASSED + 1))
    SUMMARY+=("static   $name: passed")
  else
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    why="exit $rc"
    if [[ ${cmd[0]} == npm && ${cmd[1]} == run ]] \
       && ! "$NODE" -e 'process.exit(require("./package.json").scripts?.[process.argv[1]] ? 0 : 1)' "${cmd[-1]}"; then
      why="$why: no \"${cmd[-1]}\" script in package.json"
    fi
    SUMMARY+=("static   $name: FAILED ($why)")
  fi
done

# ---------------------------------------------------------------- vitest passes
[[ $FAST -eq 1 ]] || ensure_chromium
PGLITE_TOTAL=0

# run_vitest NAME [VAR=value...] [-- VITEST_ARG...]: one vitest run with that environment; adds its counts. The
# vitest arguments are the script's own (VITEST_ARGS) unless given after `--`.
run_vitest() {
  local name=$1; shift
  local json="$WORK_DIR/$name.json"
  local rc=0 counts passed failed skipped total file_errors
  local vars=() args=("${VITEST_ARGS[@]}")
  while [[ $# -gt 0 && $1 != -- ]]; do vars+=("$1"); shift; done
  if [[ ${1:-} == -- ]]; then shift; args=("$@"); fi
  rm -f "$json"
  log "pass '$name': vitest run ${args[*]}"
  run_child env -u TEST_DATABASE -u TEST_DATABASE_URL -u LIVE_CORPUS_DIR -u LIVE_CORPUS_FROM -u TEST_REDIS_URL "${vars[@]}" \
    "$NODE" node_modules/.bin/vitest run \
      --reporter=default --reporter=json --outputFile.json="$json" \
      "${args[@]}" || rc=$?
  if [[ ! -s $json ]]; then
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    SUMMARY+=("$(printf '%-8s' "$name") : COULD NOT RUN (vitest exited $rc without a JSON report)")
    return 0
  fi
  # Failed = failed tests + files that failed on their own (import error, top-level
  # hook, ...). numFailedTestSuites is not added as is: vitest also marks every file
  # and describe that merely contains a failed test as a failed suite.
  counts="$("$NODE" -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const fileErrors = r.testResults.filter((f) => f.status === "failed" &&
      (f.message || !f.assertionResults.some((a) => a.status === "failed"))).length;
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(r.numPassedTests, r.numFailedTests + fileErrors, skipped, r.numTotalTests, fileErrors);
  ' "$json")" || counts=""
  if [[ -z $counts ]]; then
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    SUMMARY+=("$(printf '%-8s' "$name") : COULD NOT RUN (unreadable JSON report from vitest, exit $rc)")
    return 0
  fi
  read -r passed failed skipped total file_errors <<<"$counts"
  local note=""
  [[ $file_errors -gt 0 ]] && note=" (incl. $file_errors test file(s) failing outside a test)"
  if [[ $rc -ne 0 && $failed -eq 0 ]]; then
    failed=1
    note=" (vitest exited $rc without a failed test: unhandled error or no test files, see above)"
  fi
  TOTAL_PASSED=$((TOTAL_PASSED + passed))
  TOTAL_FAILED=$((TOTAL_FAILED + failed))
  TOTAL_SKIPPED=$((TOTAL_SKIPPED + skipped))
  [[ $name == pglite ]] && PGLITE_TOTAL=$total
  SUMMARY+=("$(printf '%-8s' "$name") : $passed passed, $failed failed, $skipped skipped$note")
  # the failures by name, with the first line of each message, so the summary (all CI keeps) says what failed
  if [[ $failed -gt 0 ]]; then
    local line
    while IFS= read -r line; do SUMMARY+=("           $line"); done < <("$NODE" -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const first = (m) => String(m ?? "").split("\n").find((l) => l.trim())?.trim().slice(0, 200) ?? "";
      for (const f of r.testResults) {
        const file = require("path").relative(process.cwd(), f.name);
        const failed = f.assertionResults.filter((a) => a.status === "failed");
        if (f.status === "failed" && (f.message || failed.length === 0)) console.log(`FAILED ${file}: ${first(f.message)}`);
        for (const a of failed) console.log(`FAILED ${file} > ${a.fullName}: ${first(a.failureMessages?.[0])}`);
      }
    ' "$json" || true)
  fi
}

# Pass 1: PGlite, writing the live editor's corpus
CORPUS_DIR="$WORK_DIR/live-corpus"
mkdir -p "$CORPUS_DIR"
run_vitest pglite TEST_DATABASE=pglite "LIVE_CORPUS_DIR=$CORPUS_DIR"

# Pass 2: the live editor over the corpus (vitest.config.ts takes only *.corpus.test.ts when LIVE_CORPUS_FROM is set)
if [[ $FILTERED -gt 0 ]] && ! compgen -G "$CORPUS_DIR/*.jsonl" >/dev/null; then
  log "pass 'corpus': skipped, the files chosen stored no page content"
  TOTAL_SKIPPED=$((TOTAL_SKIPPED + 1))
  SUMMARY+=("corpus   : SKIPPED (the files chosen stored no page content for the live editor's corpus; counted as 1 skipped)")
else
  run_vitest corpus TEST_DATABASE=pglite "LIVE_CORPUS_FROM=$CORPUS_DIR" --
fi

# Pass 3: PostgreSQL (not with --fast)
if [[ $FAST -eq 1 ]]; then
  echo
  echo "==== test summary (make test-fast: typecheck, the PGlite pass without the heavy files and its corpus; make test runs all) ===="
  printf '%s\n' "${SUMMARY[@]}"
  echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
  [[ $TOTAL_FAILED -eq 0 ]]
  exit
fi
resolve_pg_bindir

if [[ -z $PG_BINDIR ]]; then
  if [[ -n ${CI:-} ]]; then
    log "ERROR: PostgreSQL 15 (initdb/pg_ctl) not found and could not be installed; CI=$CI requires the postgres pass"
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    SUMMARY+=("postgres : COULD NOT RUN (PostgreSQL 15 not available; required when CI is set)")
  else
    cat <<EOF

########################################################################
##  NOTICE: THE POSTGRESQL TEST PASS IS SKIPPED
##  No PostgreSQL 15 server binaries (initdb, pg_ctl) were found and
##  they could not be installed (needs root and apt-get:
##  apt-get install postgresql-15). Only the PGlite pass ran, so
##  PostgreSQL-specific behaviour is NOT tested. With CI set this fails.
########################################################################

EOF
    TOTAL_SKIPPED=$((TOTAL_SKIPPED + PGLITE_TOTAL))
    SUMMARY+=("postgres : SKIPPED (PostgreSQL 15 not available; its $PGLITE_TOTAL test(s) counted as skipped)")
  fi
elif ! start_pg; then
  log "ERROR: could not start PostgreSQL"
  TOTAL_FAILED=$((TOTAL_FAILED + 1))
  SUMMARY+=("postgres : COULD NOT RUN (PostgreSQL server did not start)")
  stop_pg
else
  log "PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{print $3}') ready on 127.0.0.1:$PG_PORT"
  # Redis for this pass only (PGlite belongs to one process): several server processes share live documents through it
  ensure_redis
  if [[ -n $REDIS_SERVER ]] && start_redis; then
    log "Redis $("$REDIS_SERVER" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') ready on 127.0.0.1:$REDIS_PORT"
  else
    stop_redis
    if [[ -n ${CI:-} ]]; then
      log "ERROR: no Redis (redis-server not found and not installed, or it did not start); CI=$CI requires it"
      TOTAL_FAILED=$((TOTAL_FAILED + 1))
      SUMMARY+=("redis    : NOT AVAILABLE (required when CI is set: the live tests of several processes fail)")
    else
      cat <<EOF

########################################################################
##  NOTICE: NO REDIS: LIVE DOCUMENTS ACROSS PROCESSES ARE NOT TESTED
##  redis-server was not found and could not be installed (needs root
##  and apt-get: apt-get install redis-server), or it did not start.
##  test/browser/live-two-processes.test.ts and test/live/live-redis
##  .test.ts are skipped in the postgres pass. With CI set this fails.
########################################################################

EOF
      SUMMARY+=("redis    : NOT AVAILABLE (the live tests of several processes skipped in the postgres pass)")
    fi
  fi
  run_vitest postgres TEST_DATABASE=postgres \
    "TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$PG_PORT/postgres" \
    ${REDIS_URL_STARTED:+"TEST_REDIS_URL=$REDIS_URL_STARTED"}
  stop_redis
  stop_pg
fi

# ---------------------------------------------------------------- summary
echo
echo "==== test summary ===="
printf '%s\n' "${SUMMARY[@]}"
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
[[ $TOTAL_FAILED -eq 0 ]]
