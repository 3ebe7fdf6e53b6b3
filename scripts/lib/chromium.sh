# Sourced by scripts/run-tests.sh: makes sure Debian's Chromium is at /usr/bin/chromium for the browser test
# (test/browser/, driven by playwright-core, which never downloads a browser of its own). Where it is missing it is
# installed with apt-get (root only; packages chromium and chromium-driver); elsewhere the browser test fails and
# says how to install it. Idempotent: nothing happens when it is there. Progress goes to stderr through `log`.
CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

ensure_chromium() {
  [[ -x $CHROMIUM_PATH ]] && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "Chromium not found at $CHROMIUM_PATH and cannot be installed here (needs root and apt-get): the browser test will fail"
    return 0
  fi
  log "Chromium not found: apt-get install chromium chromium-driver (for the browser test)"
  local rc=0
  { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver \
    || { DEBIAN_FRONTEND=noninteractive apt-get update \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver; }; \
  } </dev/null >&2 || rc=$?
  [[ $rc -eq 0 ]] || log "could not install Chromium (apt-get exited $rc): the browser test will fail"
  return 0
}
