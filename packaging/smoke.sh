#!/usr/bin/env bash
# Proves a release package, x64 or arm64 (arm64 on x86_64 runs under qemu-user: binfmt when
# it works, else qemu invoked explicitly, with the packaged ffmpeg/ffprobe wrapped the same way):
#  1. the tarball's .sha256 and the package's own SHA256SUMS; a tampered copy is refused by
#     the package's install.sh;
#  2. install with the package's own install.sh --root into a scratch root;
#  3. the installed server on the bundled Node started and stopped --starts N times (default
#     50): each start must reach /readyz 200 and each SIGTERM end in exit 0 with "stopped
#     cleanly"; any abort (e.g. "Assertion failed", SIGABRT) or other exit fails the run;
#  4. on the first start: an image uploaded with tus reaches `ready`, `placard wait-ready`
#     and an online `placard backup` with the packaged CLI;
#  5. --port80: the server binds port 80 as an unprivileged user given only
#     CAP_NET_BIND_SERVICE (what install.sh --port 80 grants through the unit), and without
#     it exits 1 with a one-line error, in a private network namespace (no real port 80).
# Usage: packaging/smoke.sh [TARBALL] [--starts N] [--no-upload] [--port80]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=packaging/runtime.sh disable=SC1091
. packaging/runtime.sh

TARBALL=""
STARTS=50
UPLOAD=1
PORT80=0
while [ $# -gt 0 ]; do
  case "$1" in
    --starts) STARTS=$2; shift 2 ;;
    --no-upload) UPLOAD=0; shift ;;
    --port80) PORT80=1; shift ;;
    -*) echo "smoke: unknown option $1" >&2; exit 2 ;;
    *) TARBALL=$1; shift ;;
  esac
done
[ -n "$TARBALL" ] || TARBALL=$(find packaging/out -maxdepth 1 -name 'placard-*-linux-*.tar.gz' 2>/dev/null | sort | tail -n 1)
if [ -z "$TARBALL" ] || [ ! -f "$TARBALL" ]; then echo "smoke: no package (run npm run package)" >&2; exit 1; fi
t0=$(date +%s)
say() { printf 'smoke [%4ss]: %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
fail() { echo "smoke: FAILED: $*" >&2; [ -f "${LOG:-}" ] && tail -30 "$LOG" >&2; exit 1; }

(cd "$(dirname "$TARBALL")" && sha256sum -c "$(basename "$TARBALL").sha256" >/dev/null) || fail "checksum mismatch"
say "checksum of $(basename "$TARBALL") ok"

SCRATCH=$(mktemp -d)
PID=""
cleanup() { if [ -n "$PID" ]; then kill -KILL "$PID" 2>/dev/null || true; fi; rm -rf "$SCRATCH"; }
trap cleanup EXIT
ROOT="$SCRATCH/root"
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$SCRATCH/unpacked"
tar -xzf "$TARBALL" -C "$SCRATCH/unpacked"
PKG_DIR=$(find "$SCRATCH/unpacked" -mindepth 1 -maxdepth 1 -type d | head -n 1)
(cd "$PKG_DIR" && sha256sum -c --quiet SHA256SUMS) || fail "files inside the package do not match SHA256SUMS"
ARCH=$(cat "$PKG_DIR/ARCH")

# A tampered copy (one byte of the server changed after SHA256SUMS was written) is refused.
cp -a "$PKG_DIR" "$SCRATCH/tampered"
printf '\n// tampered\n' >>"$SCRATCH/tampered/dist/server/src/main.js"
if out=$(sh "$SCRATCH/tampered/install.sh" --root "$SCRATCH/tampered-root" 2>&1); then fail "install.sh installed a tampered package: $out"; fi
case "$out" in *SHA256SUMS*) ;; *) fail "install.sh refused the tampered package without naming SHA256SUMS: $out" ;; esac
[ ! -e "$SCRATCH/tampered-root/opt/placard" ] || fail "install.sh left a tampered program behind"
say "install.sh refuses a tampered package: $(printf '%s' "$out" | tail -n 1)"

# The installer comes from inside the package, as an admin would run it.
sh "$PKG_DIR/install.sh" --root "$ROOT" --package "$TARBALL" --port "$PORT" >"$SCRATCH/install.log" 2>&1 || { cat "$SCRATCH/install.log" >&2; fail "install.sh --root"; }
grep -q 'SHA256SUMS' "$SCRATCH/install.log" || fail "install.sh did not check SHA256SUMS"

CURRENT="$ROOT/opt/placard/current"
NODE="$CURRENT/node/bin/node"
[ -x "$NODE" ] || fail "no bundled node at $NODE"
PREFIX=$(runtime_exec_prefix "$ARCH" "$NODE")
run() {
  # shellcheck disable=SC2086 # the prefix is words
  QEMU_LD_PREFIX=$AARCH64_SYSROOT $PREFIX "$@"
}
say "bundled $(run "$NODE" --version) ($ARCH)${PREFIX:+ under qemu, invoked explicitly: $PREFIX}$([ "$ARCH" != "$(runtime_host_arch)" ] && [ -z "$PREFIX" ] && echo ' under qemu through binfmt_misc')"
[ "$(run "$NODE" --version)" = "v$(cat "$CURRENT/NODE_VERSION")" ] || fail "the bundled node is not the packaged version"

DATA="$ROOT/var/lib/placard"
SERVER_ENV=(PATH=/usr/bin:/bin HOME="$SCRATCH" QEMU_LD_PREFIX="$AARCH64_SYSROOT" PLACARD_DATA_DIR="$DATA" PLACARD_PORT="$PORT" PLACARD_HTTPS_PORT="$((PORT + 1))" PLACARD_HOST=127.0.0.1 PLACARD_LOG_LEVEL=info)
if [ -n "$PREFIX" ]; then
  # No binfmt: the server's ffmpeg/ffprobe (the packaged arm64 ones) go through qemu too.
  mkdir -p "$SCRATCH/bin"
  for tool in ffmpeg ffprobe; do
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$PREFIX" "$CURRENT/node_modules/@$tool-installer/linux-$ARCH/$tool" >"$SCRATCH/bin/$tool"
    chmod 0755 "$SCRATCH/bin/$tool"
  done
  SERVER_ENV+=(PLACARD_FFMPEG="$SCRATCH/bin/ffmpeg" PLACARD_FFPROBE="$SCRATCH/bin/ffprobe")
fi
readyz() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/readyz" 2>/dev/null || true; }

# Starts the server, waits for /readyz 200 (or its exit), runs $1 (a function) if given, stops it.
# Sets RESULT: ok, or what went wrong.
cycle() {
  local i=$1 extra=${2:-} code status
  LOG="$SCRATCH/server-$i.log"
  # shellcheck disable=SC2086 # the prefix is words
  env -i "${SERVER_ENV[@]}" $PREFIX "$NODE" "$CURRENT/dist/server/src/main.js" >"$LOG" 2>&1 &
  PID=$!
  RESULT=""
  for _ in $(seq 1 1200); do
    if ! kill -0 "$PID" 2>/dev/null; then
      status=0
      wait "$PID" || status=$?
      PID=""
      RESULT="exited $status before /readyz answered 200"
      break
    fi
    code=$(readyz)
    [ "$code" = 200 ] && break
    sleep 0.1
  done
  if [ -z "$RESULT" ] && [ "$code" != 200 ]; then RESULT="/readyz never answered 200 (last $code)"; fi
  if [ -z "$RESULT" ] && [ -n "$extra" ]; then "$extra" || RESULT="$extra failed"; fi
  # Some requests, then idle for a second: V8's GC tasks run while the server waits.
  if [ -z "$RESULT" ]; then
    for path in /healthz /api/v1/auth/status /api/v1/system/identity /readyz; do curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$PORT$path" || true; done
    sleep "${PLACARD_SMOKE_IDLE:-1}"
  fi
  if [ -n "$PID" ]; then
    kill -TERM "$PID"
    status=0
    wait "$PID" || status=$?
    PID=""
    if [ "$status" != 0 ]; then RESULT="${RESULT:+$RESULT; }stop exited $status$([ "$status" = 134 ] && echo ' (SIGABRT)')"
    elif ! grep -q 'stopped cleanly' "$LOG"; then RESULT="${RESULT:+$RESULT; }no clean stop in the log"; fi
  fi
  if grep -q 'Assertion failed\|FATAL ERROR\|Aborted' "$LOG"; then RESULT="${RESULT:+$RESULT; }$(grep -m 1 'Assertion failed\|FATAL ERROR\|Aborted' "$LOG" | cut -c1-200)"; fi
  [ -n "$RESULT" ] || RESULT=ok
}

first_start_checks() {
  if [ "$UPLOAD" = 1 ]; then node packaging/smoke-client.mjs "http://127.0.0.1:$PORT" 600 || return 1; fi
  # The packaged CLI: the readiness wait the unit uses, and an online backup while the server runs.
  env -i "${SERVER_ENV[@]}" "${PREFIX_ARR[@]}" "$NODE" "$CURRENT/dist/server/src/cli.js" wait-ready --timeout 60 || return 1
  local backup
  backup=$(env -i "${SERVER_ENV[@]}" "${PREFIX_ARR[@]}" "$NODE" "$CURRENT/dist/server/src/cli.js" backup --no-media 2>/dev/null) || return 1
  [ -s "$backup" ] || return 1
  say "the packaged CLI: wait-ready, and placard backup wrote $(basename "$backup")"
}
read -r -a PREFIX_ARR <<<"$PREFIX"

# The GC path that aborted Node 24 + better-sqlite3 12, provoked directly (packaging/gc-check.cjs).
GC_RUNS=${PLACARD_SMOKE_GC_RUNS:-3}
gc_failed=0
for i in $(seq 1 "$GC_RUNS"); do
  status=0
  gc_out=$(run "$NODE" packaging/gc-check.cjs "$CURRENT" 2>&1) || status=$?
  if [ "$status" != 0 ]; then
    gc_failed=$((gc_failed + 1))
    say "gc check $i: exit $status: $(printf '%s\n' "$gc_out" | grep -m 1 'Assertion failed\|Error' | cut -c1-160)"
  fi
done
say "gc check: $((GC_RUNS - gc_failed)) of $GC_RUNS runs clean ($(printf '%s\n' "$gc_out" | tail -n 1 | cut -c1-120))"

aborts=0
failures=0
for i in $(seq 1 "$STARTS"); do
  if [ "$i" = 1 ]; then cycle "$i" first_start_checks; else cycle "$i"; fi
  if [ "$RESULT" != ok ]; then
    failures=$((failures + 1))
    case "$RESULT" in *Assertion*|*SIGABRT*|*Aborted*|*FATAL*) aborts=$((aborts + 1)) ;; esac
    say "start $i: $RESULT"
    tail -5 "$LOG" >&2
  elif [ "$i" = 1 ] || [ $((i % 10)) = 0 ]; then
    say "start $i: ready, stopped cleanly"
  fi
done
say "$((STARTS - failures)) of $STARTS starts clean ($aborts aborts, $((failures - aborts)) other failures) on the bundled Node $(cat "$CURRENT/NODE_VERSION") $ARCH"
[ "$failures" = 0 ] || fail "$failures of $STARTS starts failed"
[ "$gc_failed" = 0 ] || fail "$gc_failed of $GC_RUNS gc checks aborted"

if [ "$PORT80" = 1 ]; then
  # A private network namespace: port 80 there is nobody else's. The data directory is given
  # to an unprivileged user, as the unit runs the server as placard.
  { command -v unshare >/dev/null && command -v setpriv >/dev/null; } || fail "--port80 needs unshare and setpriv (util-linux)"
  [ "$(id -u)" = 0 ] || fail "--port80 needs root (to make the namespace and drop to nobody)"
  P80="$SCRATCH/p80"
  mkdir -p "$P80"
  cp -a "$DATA" "$P80/data"
  chown -R nobody "$P80/data"
  chmod 0755 "$SCRATCH" "$P80"
  cat >"$P80/run.sh" <<EOF
set -u
ip link set lo up 2>/dev/null || true
# exec: a backgrounded start is then the server itself, so \$! is its pid and the SIGTERM
# below reaches the server (not a shell around it, which would die with 143).
start() {
  exec env -i PATH=/usr/bin:/bin HOME=/ PLACARD_DATA_DIR="$P80/data" PLACARD_PORT=80 PLACARD_HTTPS_PORT=0 PLACARD_HOST=127.0.0.1 QEMU_LD_PREFIX="$AARCH64_SYSROOT" \\
    setpriv --reuid=nobody --regid=nogroup --clear-groups "\$@" $PREFIX "$NODE" "$CURRENT/dist/server/src/main.js"
}
# Without the capability: a clear refusal, not a crash.
(start --inh-caps=-all) >"$P80/denied.log" 2>&1
echo "denied-exit \$?"
# With CAP_NET_BIND_SERVICE as the unit grants it (AmbientCapabilities).
start --inh-caps=+net_bind_service --ambient-caps=+net_bind_service >"$P80/granted.log" 2>&1 &
pid=\$!
code=000
for _ in \$(seq 1 1200); do
  code=\$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:80/readyz || true)
  [ "\$code" = 200 ] && break
  kill -0 \$pid 2>/dev/null || break
  sleep 0.1
done
echo "granted-readyz \$code"
kill -TERM \$pid 2>/dev/null
wait \$pid
echo "granted-exit \$?"
EOF
  p80_out=$(unshare --net sh "$P80/run.sh" 2>&1) || true
  echo "$p80_out" | grep -q '^denied-exit 1$' || { cat "$P80/denied.log" >&2; fail "port 80 without the capability: $p80_out"; }
  { [ "$(grep -c . "$P80/denied.log")" -le 2 ] && grep -q 'port 80' "$P80/denied.log" && ! grep -q '    at ' "$P80/denied.log"; } || { cat "$P80/denied.log" >&2; fail "port 80 without the capability: no clear one-line error"; }
  { echo "$p80_out" | grep -q '^granted-readyz 200$' && echo "$p80_out" | grep -q '^granted-exit 0$'; } || { cat "$P80/granted.log" >&2; fail "port 80 with CAP_NET_BIND_SERVICE: $p80_out"; }
  say "port 80: refused clearly without CAP_NET_BIND_SERVICE ($(head -n 1 "$P80/denied.log" | cut -c1-120)); /readyz 200 on :80 as nobody with it; clean stop"
fi
say "OK"
