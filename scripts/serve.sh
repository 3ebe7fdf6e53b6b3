#!/usr/bin/env bash
# Starts the server as `make run` does and the benchmark measures it: the project's Node with the settings below, in
# place of this shell (exec: the server keeps this process id, and receives its signals directly).
#   HEAP_LIMIT_MB           the JavaScript heap's ceiling in MiB (default 768), given to Node as --max-old-space-size.
#                           The one memory setting: it is sized at least twice the largest live heap measured (what a
#                           full collection leaves at the worst moment of the soak test and the worst-case answers,
#                           docs/operating.md, Memory), because a ceiling that ordinary use can reach kills the
#                           server. The server checks at start that its ceiling is this and that the machine has the
#                           memory for it (src/http/memory-check.ts), and refuses work it can refuse while what is
#                           alive passes half of it (src/http/memory-pressure.ts).
#   NODE_SERVER_FLAGS       more Node flags, after the ceiling (a later --max-old-space-size wins; one under
#                           HEAP_LIMIT_MB stops the start).
#   MALLOC_TRIM_THRESHOLD_  glibc keeps freed memory for reuse up to this much: the embedded database's start-up
#                           (PGlite, WebAssembly) frees a large block that the default dynamic threshold never
#                           returns.
#   NODE_COMPILE_CACHE      Node keeps the modules it compiled (the TypeScript already stripped, V8's code cache) in
#                           .tmp/compile-cache: a start that finds them there never loads Node's TypeScript stripper
#                           (a WebAssembly module, ~18 MB resident for the process's life) and starts faster.
#   MALLOC_ARENA_MAX        glibc gives each thread that allocates (libuv's pool compressing answers, V8's
#                           compiler and collector threads) an arena of its own, each keeping freed memory: two
#                           arenas in all keep the peak lower at no measurable cost in make bench's reads or writes.
#   --max-semi-space-size   V8's young generation: 16 MB semi-spaces (V8's size for small heaps). With a 768 MiB
#                           heap V8 would take 64 MB ones (a young generation of 192 MB), which put the worst-case
#                           answers' peak over its goal on PostgreSQL; semi-spaces of 2 MB, as they once were here,
#                           promoted short-lived answers into the old generation and cost reads a third of their
#                           throughput in make bench.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export HEAP_LIMIT_MB="${HEAP_LIMIT_MB:-768}"
if [[ ! $HEAP_LIMIT_MB =~ ^[0-9]+$ ]]; then
  echo "configuration error: HEAP_LIMIT_MB must be a whole number of MiB, got \"$HEAP_LIMIT_MB\"" >&2
  exit 1
fi
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-1048576}"
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/.tmp/compile-cache}"
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# shellcheck disable=SC2086 # the flags are words
exec node --max-old-space-size="$HEAP_LIMIT_MB" --max-semi-space-size=16 ${NODE_SERVER_FLAGS:-} src/server.ts "$@"
