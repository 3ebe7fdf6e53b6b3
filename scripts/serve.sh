#!/usr/bin/env bash
# Starts the server as `make run` does and the benchmark measures it: the project's Node with the memory settings
# below, in place of this shell (exec: the server keeps this process id, and receives its signals directly).
#   MALLOC_TRIM_THRESHOLD_  glibc keeps freed memory for reuse up to this much: the embedded database's start-up
#                           (PGlite, WebAssembly) frees a large block that the default dynamic threshold never
#                           returns (docs/speed.md, Memory, has the figures).
#   NODE_COMPILE_CACHE      Node keeps the modules it compiled (the TypeScript already stripped, V8's code cache) in
#                           .tmp/compile-cache: a start that finds them there never loads Node's TypeScript stripper
#                           (a WebAssembly module, ~18 MB resident for the process's life) and starts faster.
#   MALLOC_ARENA_MAX        glibc gives each thread that allocates (libuv's pool compressing answers, V8's
#                           compiler and collector threads) an arena of its own, each keeping freed memory: two
#                           arenas in all kept the worst case's peak ~10 MB lower (docs/speed.md, Memory) at no
#                           measurable cost in make bench's reads or writes.
#   --max-semi-space-size   V8's young generation grows large under load by default; small semi-spaces cost nothing
#                           measurable in throughput (make bench) and keep tens of MB off (docs/speed.md, Memory).
#   --max-old-space-size    the heap's ceiling (the default lets it grow lazily to hundreds of MB before collecting).
#                           Under sustained load the heap fills with garbage up to this ceiling before V8 collects
#                           it, so the ceiling, not the live objects, sets the resident memory (docs/speed.md). It
#                           must hold the server's own live objects, the caches (CACHE_BYTES in all, counted by what
#                           they keep alive) and the text being built into answers and page writes at once (one
#                           budget of LIMIT_LARGE_ANSWERS x LIMIT_LIST_TEXT_BYTES, src/http/answer-gate.ts, each
#                           byte of it held a few times over while it is built): the ceiling below holds the
#                           defaults with the worst case of test/api/answer-size.test.ts (docs/speed.md, Memory, has
#                           the figures). Raise it with any of them.
# Override any of them from the environment: NODE_SERVER_FLAGS replaces the Node flags.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-1048576}"
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/.tmp/compile-cache}"
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# shellcheck disable=SC2086 # the flags are words
exec node ${NODE_SERVER_FLAGS:---max-semi-space-size=2 --max-old-space-size=104} src/server.ts "$@"
