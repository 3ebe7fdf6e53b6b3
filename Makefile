# The two commands a fresh machine needs: `make run` and `make test`. Everything goes through node_modules/.bin
# first on PATH, so `node` is the project's Node 24 (the node@24 devDependency), not the system's.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: run test test-fast generate docs editor sdk lint typecheck bench statements install clean-data

# A recipe that fails deletes its half-made targets (docs/index.html, docs/redoc.standalone.js), so the next run
# builds them again.
.DELETE_ON_ERROR:

# Installs dependencies when node_modules is missing or older than the lock file (npm writes
# node_modules/.package-lock.json on every install). The script runs npm on Node 24 also on the first install, when
# node_modules has no node yet: npm on the system's older node warns EBADENGINE for half the packages.
node_modules/.package-lock.json: package-lock.json
	bash scripts/install-deps.sh

install: node_modules/.package-lock.json

## make run: install what is missing, migrate, start the server on the embedded database (DATA_DIR, default ./data)
run: install docs editor
	bash scripts/serve.sh

## make test: every check the project has (typecheck, lint, generated files fresh, the suite on PGlite and PostgreSQL)
test: install docs editor
	bash scripts/run-tests.sh $(ARGS)

## make test-fast: the loop while editing: typecheck, then the PGlite pass without fuzzing, crash, answer-size, browser,
## memory, two-process and code-sample files (no lint, no PostgreSQL pass). `make test` stays the whole truth, and CI
## runs it.
test-fast: install docs editor
	bash scripts/run-tests.sh --fast $(ARGS)

## make generate: bundle the OpenAPI document and regenerate the types and the client SDK in generated/
generate: install
	npm run -s generate

## make docs: build the self-contained API reference into docs/index.html (not committed; `make run` and
## `make test` build it when it is missing or older than what it is made from: generated/openapi.json, the scripts
## that add the code samples (docs/openapi.docs.json, the document it is built from) and keep it offline,
## redocly.yaml, and the lock file, which pins redocly: so it is never stale, and a fresh one is not rebuilt)
docs: docs/index.html docs/redoc.standalone.js

DOCS_INPUTS := generated/openapi.json scripts/code-samples.ts scripts/lib/code-samples.ts scripts/docs-offline.ts \
	redocly.yaml package-lock.json

# one recipe makes both: the page, and Redoc's bundle it imports (taken out of the page by scripts/docs-offline.ts)
docs/index.html docs/redoc.standalone.js &: $(DOCS_INPUTS) | node_modules/.package-lock.json
	npm run -s docs

## make editor: bundle the browser's live editor (src/modules/web/editor, with TipTap, Yjs and the Hocuspocus
## provider) into dist/web/editor.js, which the server sends as /web/editor.js (not committed; `make run` and `make test`
## build it when it is missing or older than any file esbuild read for it last time, which the script checks itself:
## a fresh one is not rebuilt, in a fraction of a second; `npm run editor` always rebuilds)
editor: install
	node scripts/build-editor.ts --if-stale

## make sdk: the SDK as an installable package (dist/notes-service-sdk-<version>.tgz): the generated client and the
## helpers in sdk/src, compiled with their types; sdk/README.md says how to use it
sdk: install
	node scripts/build-sdk.ts

lint: install
	npm run -s lint

## make bench: benchmarks, reported as ratios against a baseline measured in the same run: the diff, then the
## service over HTTP on PGlite and on a throw-away PostgreSQL (BENCH_DB, BENCH_CASES, BENCH_SECONDS, BENCH_ROUNDS: see
## scripts/bench-http.ts). Run by hand, not part of `make test`; fails when a goal is missed.
bench: install
	node scripts/bench-diff.ts
	node scripts/bench-http.ts

## make statements: SQL statements per request for every built operation (in-memory PGlite)
statements: install
	node scripts/count-statements.ts

typecheck: install
	npm run -s typecheck

clean-data:
	rm -rf data
