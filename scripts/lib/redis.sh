#!/usr/bin/env bash
# A throw-away Redis server for the tests of several processes sharing live documents (REDIS_URL,
# test/browser/live-two-processes.test.ts), started the way scripts/lib/postgres.sh starts PostgreSQL.
#
# Sourced (scripts/run-tests.sh): defines the functions below; the caller defines `log MESSAGE`, sets NODE (the
# project's node, for free_port) and calls redis_cleanup from its EXIT trap.
#   ensure_redis   sets REDIS_SERVER to Debian's redis-server, installing the package with apt-get where it is missing
#                  (root only; the package's own system service is kept from starting, as postgres.sh does); empty when
#                  it cannot be had
#   start_redis    a server on a free port bound to 127.0.0.1, in a directory of its own under /tmp, nothing written
#                  to disk (--save '' --appendonly no), run as a child of the caller (not daemonized, so it is reaped
#                  here); sets REDIS_PORT and REDIS_URL once it answers PING; non-zero when it would not start
#   stop_redis     stops it (SIGTERM, then SIGKILL) and deletes its directory
# Run: `bash scripts/lib/redis.sh serve` starts one, prints its URL (redis://127.0.0.1:PORT) alone on stdout and keeps
# it until its standard input ends or it gets SIGINT/SIGTERM (for running the test by hand: TEST_REDIS_URL=...).

REDIS_SERVER=""
REDIS_DIR=""
REDIS_PID=""
REDIS_PORT=""
REDIS_URL_STARTED=""
REDIS_STARTED=0
REDIS_POLICY_RC_CREATED=0

find_redis_server() {
  local f
  for f in "$(command -v redis-server 2>/dev/null || true)" /usr/bin/redis-server /usr/local/bin/redis-server; do
    if [[ -n $f && -x $f ]]; then
      echo "$f"
      return 0
    fi
  done
  return 1
}

install_redis() {
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1 || return 1
  log "redis-server not found: apt-get install redis-server (for the test of several processes)"
  # The package's postinst would start a system Redis on port 6379: keep services from starting during the install
  # (the usual Docker policy-rc.d), unless one exists.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    REDIS_POLICY_RC_CREATED=1
  fi
  local rc=0
  # without `apt-get update` first when the lists already know the package (a second run, a machine kept)
  { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
    || { DEBIAN_FRONTEND=noninteractive apt-get update \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server; }; \
  } </dev/null >&2 || rc=$?
  if [[ $REDIS_POLICY_RC_CREATED -eq 1 ]]; then
    rm -f /usr/sbin/policy-rc.d
    REDIS_POLICY_RC_CREATED=0
  fi
  return $rc
}

ensure_redis() { # sets REDIS_SERVER (empty when redis-server is missing and could not be installed)
  REDIS_SERVER="$(find_redis_server || true)"
  if [[ -z $REDIS_SERVER ]]; then
    if install_redis; then
      hash -r
      REDIS_SERVER="$(find_redis_server || true)"
    else
      log "could not install redis-server (not root, no apt-get, or apt-get failed)"
    fi
  fi
}

# postgres.sh's, when it was sourced first
declare -F free_port >/dev/null || free_port() {
  "${NODE:-node}" -e '
    const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

redis_ping() { # PORT: true when the server there answers PING with PONG (redis-cli, or bash's /dev/tcp without it)
  local port=$1 answer=""
  if command -v redis-cli >/dev/null 2>&1; then
    answer="$(timeout 2 redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)"
  else
    answer="$(timeout 2 bash -c '
      exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
      printf "PING\r\n" >&3
      IFS= read -r line <&3 && printf "%s" "$line"' _ "$port" 2>/dev/null || true)"
    answer="${answer#+}"
  fi
  [[ ${answer%$'\r'} == PONG ]]
}

stop_redis_server() { # SIGTERM (nothing to save), SIGKILL after 10 s, and reap our child
  if [[ $REDIS_STARTED -eq 1 ]]; then
    REDIS_STARTED=0
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$REDIS_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true   # reap it
  fi
}

start_redis() { # sets REDIS_DIR, REDIS_PORT, REDIS_URL_STARTED, REDIS_STARTED; non-zero on failure
  [[ -n $REDIS_SERVER ]] || { log "ERROR: start_redis without redis-server (ensure_redis first)"; return 1; }
  REDIS_DIR="$(mktemp -d "/tmp/${REDIS_DIR_PREFIX:-run-tests-redis}.XXXXXX")"
  chmod 700 "$REDIS_DIR"
  local attempt waited
  for attempt in 1 2 3; do
    REDIS_PORT="$(free_port)"
    log "starting Redis on 127.0.0.1:$REDIS_PORT"
    # the port can be taken between free_port and the bind: then the server exits, and another port is tried
    "$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes --dir "$REDIS_DIR" \
      --save '' --appendonly no --daemonize no --logfile '' --loglevel warning \
      </dev/null >>"$REDIS_DIR/log" 2>&1 &
    REDIS_PID=$!
    REDIS_STARTED=1   # from here on cleanup must stop it
    for ((waited = 0; waited < 100; waited++)); do
      kill -0 "$REDIS_PID" 2>/dev/null || break
      if redis_ping "$REDIS_PORT"; then
        REDIS_URL_STARTED="redis://127.0.0.1:$REDIS_PORT"
        return 0
      fi
      sleep 0.1
    done
    log "Redis did not start (attempt $attempt), server log:"
    tail -n 20 "$REDIS_DIR/log" 2>/dev/null || true
    stop_redis_server
  done
  return 1
}

stop_redis() { # stop the server and delete its directory
  if [[ $REDIS_STARTED -eq 1 ]]; then
    log "stopping Redis"
    stop_redis_server
  fi
  if [[ -n $REDIS_DIR ]]; then
    rm -rf "$REDIS_DIR"
    REDIS_DIR=""
  fi
  REDIS_URL_STARTED=""
}

redis_cleanup() { # stop and delete the server, undo a policy-rc.d left by an interrupted install
  stop_redis
  if [[ $REDIS_POLICY_RC_CREATED -eq 1 ]]; then
    rm -f /usr/sbin/policy-rc.d
    REDIS_POLICY_RC_CREATED=0
  fi
}

# ---------------------------------------------------------------- `serve` mode (run, not sourced)
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  if [[ ${1:-} != serve ]]; then
    echo "usage: bash $0 serve   (prints the URL, keeps the server until stdin ends)" >&2
    exit 2
  fi
  log() { printf '[redis] %s\n' "$*" >&2; }
  REDIS_DIR_PREFIX=serve-redis
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  [[ -z ${NODE:-} && -x $ROOT/node_modules/.bin/node ]] && NODE="$ROOT/node_modules/.bin/node"
  trap 'set +e; redis_cleanup' EXIT
  trap 'log "interrupted"; exit 130' INT
  trap 'log "terminated"; exit 143' TERM
  ensure_redis
  if [[ -z $REDIS_SERVER ]]; then
    log "ERROR: redis-server not found and could not be installed"
    exit 1
  fi
  start_redis >&2 || { log "ERROR: could not start Redis"; exit 1; }
  log "Redis $("$REDIS_SERVER" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') ready on 127.0.0.1:$REDIS_PORT"
  echo "$REDIS_URL_STARTED"
  # Until the parent closes our stdin (read returns at EOF; a trapped signal interrupts it too).
  while IFS= read -r _; do :; done
fi
