#!/usr/bin/env bash
# `npm ci` on the project's own Node (the node@24 devDependency), also the first time, when node_modules does not
# have it yet. The Makefile and scripts/run-tests.sh both install through this script.
#
# Why: npm checks every package's `engines` against the Node it runs on. The system's npm runs on the system's node
# (v20 on our machines), so a first `npm ci` there warned EBADENGINE for the project itself (node >=24) and for the
# packages that want Node >= 22 (MikroORM, openapi-ts). Silencing the warnings would hide a real mismatch; instead
# npm runs on the Node the project runs on:
#   - node_modules/.bin/node when it is already installed at the locked version;
#   - else the system's node when it is the same major version;
#   - else node@<locked version> fetched once into npm's cache with `npm exec` (from the npm registry, like every
#     other package; the later `npm ci` takes the same tarball from the cache) and put first on PATH for this install.
# Then it touches node_modules/.package-lock.json, the "installed at" stamp that make and run-tests.sh compare with
# package-lock.json.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf '[install-deps] %s\n' "$*" >&2; }

# The node version package-lock.json pins for the node@24 devDependency.
want="$(sed -n '/^    "node_modules\/node": {$/,/^    }/s/^      "version": "\([^"]*\)",$/\1/p' package-lock.json)"
if [[ ! $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  log "ERROR: no node_modules/node version in package-lock.json (is the node@24 devDependency there?)"
  exit 1
fi

# PATH without node_modules/.bin (the Makefile puts it first), to find the system's node and npm.
system_path=":$PATH:"
system_path="${system_path//:$ROOT\/node_modules\/.bin:/:}"
system_path="${system_path#:}"
system_path="${system_path%:}"

node_dir=""
if [[ -x node_modules/.bin/node && "$(node_modules/.bin/node -v 2>/dev/null)" == "v$want" ]]; then
  node_dir="$ROOT/node_modules/.bin"
elif system_node="$(PATH=$system_path command -v node)" && [[ "$("$system_node" -v)" == "v${want%%.*}."* ]]; then
  node_dir="$(dirname "$system_node")"
else
  log "npm runs on the system's $(PATH=$system_path node -v 2>/dev/null || echo 'node (none)'): fetching node@$want for the install"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  # From an empty directory, so that npm exec does not pick up a half-installed node_modules/node here.
  node_bin="$(cd "$scratch" && PATH=$system_path npm exec --yes --package="node@$want" -- node -p process.execPath)"
  if [[ "$("$node_bin" -v)" != "v$want" ]]; then
    log "ERROR: npm exec node@$want gave $node_bin, which is $("$node_bin" -v)"
    exit 1
  fi
  node_dir="$(dirname "$node_bin")"
fi

PATH="$node_dir:$system_path" npm ci --no-audit --no-fund
touch node_modules/.package-lock.json
