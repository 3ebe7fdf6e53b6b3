#!/usr/bin/env bash
# A throw-away PostgreSQL 15 server, started the same way by the tests and the benchmark.
#
# Sourced (scripts/run-tests.sh): defines the functions below; the caller defines `log MESSAGE`, sets NODE (the
# project's node, for free_port) and calls stop_pg from its EXIT trap (and removes /usr/sbin/policy-rc.d when
# POLICY_RC_CREATED=1, or calls pg_cleanup, which does both).
#
# Run (the benchmark, scripts/bench-http.ts): `bash scripts/lib/postgres.sh serve` starts a server, prints its URL
# (postgresql://postgres@127.0.0.1:PORT/postgres) alone on a line on stdout, then keeps it until its standard input
# ends (the parent closed the pipe, or died) or it gets SIGINT/SIGTERM; then it stops the server and deletes its
# directory. Progress goes to stderr. Exit status 1 when no server could be started.
# PG_SETTINGS: more `-c name=value` settings for the server (the benchmark records commit times).
#
# As root the server runs as the `postgres` OS user (created when missing) in a directory under /tmp that it owns;
# PostgreSQL refuses to run as root. Where it is missing, Debian's postgresql-15 is installed with apt-get (root only).

PG_DIR=""
PG_BINDIR=""
PG_STARTED=0
PG_PID=""
PG_PORT=""
POLICY_RC_CREATED=0

as_pg() { # run a PostgreSQL binary as the postgres user (root) or as ourselves
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$PG_DIR" && runuser -u postgres -- "$@")
  else
    (cd "$PG_DIR" && "$@")
  fi
}

stop_pg_server() { # pg_ctl stop, then reap our child
  if [[ $PG_STARTED -eq 1 ]]; then
    PG_STARTED=0
    local pm_pid
    pm_pid="$(head -n1 "$PG_DIR/data/postmaster.pid" 2>/dev/null || true)"
    if [[ -n $pm_pid ]]; then
      as_pg "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" stop -m fast -s -w -t 60 \
        || as_pg "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" stop -m immediate -s -w -t 30 \
        || kill -KILL "$pm_pid" 2>/dev/null \
        || true
    fi
    local i
    for ((i = 0; i < 300; i++)); do kill -0 "$PG_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$PG_PID" 2>/dev/null; then
      log "WARNING: PostgreSQL (pid ${pm_pid:-?}) did not exit"
    else
      wait "$PG_PID" 2>/dev/null || true   # reap it
    fi
  fi
}

stop_pg() { # stop the server and delete its directory
  if [[ $PG_STARTED -eq 1 ]]; then
    log "stopping PostgreSQL"
    stop_pg_server
  fi
  if [[ -n $PG_DIR ]]; then
    rm -rf "$PG_DIR"
    PG_DIR=""
  fi
}

find_pg_bindir() {
  local f d
  f="$(dpkg -L postgresql-15 2>/dev/null | grep '/bin/initdb$' | head -n1 || true)"
  if [[ -n $f && -x $f && -x "$(dirname "$f")/pg_ctl" ]]; then
    dirname "$f"
    return 0
  fi
  for d in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

install_pg() {
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1 || return 1
  log "PostgreSQL 15 not found: apt-get install postgresql-15"
  # The package's postinst would start a system cluster on port 5432: keep services
  # from starting during the install (the usual Docker policy-rc.d), unless one exists.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    POLICY_RC_CREATED=1
  fi
  local rc=0
  { DEBIAN_FRONTEND=noninteractive apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15; \
  } </dev/null || rc=$?
  if [[ $POLICY_RC_CREATED -eq 1 ]]; then
    rm -f /usr/sbin/policy-rc.d
    POLICY_RC_CREATED=0
  fi
  return $rc
}

free_port() {
  "${NODE:-node}" -e '
    const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

start_pg() { # sets PG_DIR, PG_PORT, PG_STARTED; returns non-zero on failure
  if [[ $(id -u) -eq 0 ]]; then
    if ! id -u postgres >/dev/null 2>&1; then
      log "creating OS user postgres"
      useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin postgres || return 1
    fi
    command -v runuser >/dev/null 2>&1 || { log "ERROR: runuser not found"; return 1; }
  fi
  # Under /tmp (world-traversable, short enough for the unix socket path).
  PG_DIR="$(mktemp -d "/tmp/${PG_DIR_PREFIX:-run-tests-pg}.XXXXXX")"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$PG_DIR"
  chmod 700 "$PG_DIR"
  local locale=C
  locale -a 2>/dev/null | grep -qix 'c\.utf-\?8' && locale=C.UTF-8   # as PGlite uses
  log "initdb in $PG_DIR/data ($PG_BINDIR)"
  as_pg "$PG_BINDIR/initdb" -D "$PG_DIR/data" -A trust -U postgres -E UTF8 --locale="$locale" \
    --no-sync >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log"; log "ERROR: initdb failed"; return 1; }
  # The server runs as a child of this script (not daemonized by `pg_ctl start`) so
  # that it is reaped here: where PID 1 does not reap orphans (containers, this
  # sandbox), a pg_ctl-started postmaster would stay behind as a zombie.
  local attempt waited status
  for attempt in 1 2 3; do
    PG_PORT="$(free_port)"
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
    as_pg "$PG_BINDIR/postgres" -D "$PG_DIR/data" -p "$PG_PORT" -k "$PG_DIR" \
      -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off ${PG_SETTINGS:-} \
      </dev/null >>"$PG_DIR/log" 2>&1 &
    PG_PID=$!
    PG_STARTED=1   # from here on cleanup must stop it
    # Ready when line 8 of postmaster.pid says so (what `pg_ctl -w` checks).
    for ((waited = 0; waited < 600; waited++)); do
      kill -0 "$PG_PID" 2>/dev/null || break
      status="$(sed -n 8p "$PG_DIR/data/postmaster.pid" 2>/dev/null || true)"
      [[ ${status// /} == ready ]] && return 0
      sleep 0.1
    done
    log "PostgreSQL did not start (attempt $attempt), server log:"
    tail -n 20 "$PG_DIR/log" 2>/dev/null || true
    stop_pg_server
  done
  return 1
}

resolve_pg_bindir() { # sets PG_BINDIR (empty when PostgreSQL is missing and could not be installed)
  PG_BINDIR="$(find_pg_bindir || true)"
  if [[ -z $PG_BINDIR ]]; then
    if install_pg; then
      hash -r
      PG_BINDIR="$(find_pg_bindir || true)"
    else
      log "could not install postgresql-15 (not root, no apt-get, or apt-get failed)"
    fi
  fi
}

pg_cleanup() { # stop and delete the server, undo a policy-rc.d left by an interrupted install
  stop_pg
  if [[ $POLICY_RC_CREATED -eq 1 ]]; then
    rm -f /usr/sbin/policy-rc.d
    POLICY_RC_CREATED=0
  fi
}

# ---------------------------------------------------------------- `serve` mode (run, not sourced)
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  if [[ ${1:-} != serve ]]; then
    echo "usage: bash $0 serve   (prints the URL, keeps the server until stdin ends)" >&2
    exit 2
  fi
  log() { printf '[postgres] %s\n' "$*" >&2; }
  PG_DIR_PREFIX=bench-pg
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  [[ -z ${NODE:-} && -x $ROOT/node_modules/.bin/node ]] && NODE="$ROOT/node_modules/.bin/node"
  trap 'set +e; pg_cleanup' EXIT
  trap 'log "interrupted"; exit 130' INT
  trap 'log "terminated"; exit 143' TERM
  resolve_pg_bindir
  if [[ -z $PG_BINDIR ]]; then
    log "ERROR: PostgreSQL 15 (initdb/pg_ctl) not found and could not be installed"
    exit 1
  fi
  # Output of the initdb/start steps goes to stderr: stdout carries only the URL.
  start_pg >&2 || { log "ERROR: could not start PostgreSQL"; exit 1; }
  log "PostgreSQL $("$PG_BINDIR/postgres" --version | awk '{print $3}') ready on 127.0.0.1:$PG_PORT"
  echo "postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
  # Until the parent closes our stdin (read returns at EOF; a trapped signal interrupts it too).
  while IFS= read -r _; do :; done
fi
