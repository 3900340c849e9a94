#!/usr/bin/env bash
# Proves a release package: checks its sha256, installs it with its own install.sh into a
# scratch root (--root), runs the installed server with the bundled Node, and waits for
# /readyz 200; then runs the packaged CLI (an online backup) and stops the server cleanly.
# Usage: packaging/smoke.sh [packaging/out/placard-<version>-linux-<arch>.tar.gz]
set -euo pipefail
cd "$(dirname "$0")/.."
TARBALL=${1:-$(find packaging/out -maxdepth 1 -name 'placard-*-linux-*.tar.gz' 2>/dev/null | sort | tail -n 1)}
if [ -z "$TARBALL" ] || [ ! -f "$TARBALL" ]; then echo "smoke: no package (run npm run package)" >&2; exit 1; fi
fail() { echo "smoke: FAILED: $*" >&2; [ -f "${LOG:-}" ] && tail -30 "$LOG" >&2; exit 1; }

(cd "$(dirname "$TARBALL")" && sha256sum -c "$(basename "$TARBALL").sha256" >/dev/null) || fail "checksum mismatch"
echo "smoke: checksum ok"

SCRATCH=$(mktemp -d)
PID=""
cleanup() { if [ -n "$PID" ]; then kill -KILL "$PID" 2>/dev/null || true; fi; rm -rf "$SCRATCH"; }
trap cleanup EXIT
ROOT="$SCRATCH/root"
PORT=$((20000 + RANDOM % 20000))
# The installer comes from inside the package, as an admin would run it.
mkdir -p "$SCRATCH/unpacked"
tar -xzf "$TARBALL" -C "$SCRATCH/unpacked"
PKG_DIR=$(find "$SCRATCH/unpacked" -mindepth 1 -maxdepth 1 -type d | head -n 1)
(cd "$PKG_DIR" && sha256sum -c --quiet SHA256SUMS) || fail "files inside the package do not match SHA256SUMS"
sh "$PKG_DIR/install.sh" --root "$ROOT" --package "$TARBALL" --port "$PORT" || fail "install.sh --root"

CURRENT="$ROOT/opt/placard/current"
NODE="$CURRENT/node/bin/node"
[ -x "$NODE" ] || fail "no bundled node at $NODE"
echo "smoke: bundled $("$NODE" --version) ($(cat "$CURRENT/ARCH"))"
[ "$("$NODE" --version)" = "v$(cat "$CURRENT/NODE_VERSION")" ] || fail "the bundled node is not the packaged version"

LOG="$SCRATCH/server.log"
env -i PATH=/usr/bin:/bin HOME="$SCRATCH" PLACARD_DATA_DIR="$ROOT/var/lib/placard" PLACARD_PORT="$PORT" PLACARD_HOST=127.0.0.1 \
  "$NODE" "$CURRENT/dist/server/src/main.js" >"$LOG" 2>&1 &
PID=$!
ready=0
for _ in $(seq 1 120); do
  if ! kill -0 "$PID" 2>/dev/null; then fail "the server exited"; fi
  code=$("$NODE" -e "fetch('http://127.0.0.1:$PORT/readyz').then(r => { console.log(r.status) }, () => console.log(0))")
  if [ "$code" = 200 ]; then ready=1; break; fi
  sleep 0.5
done
[ "$ready" = 1 ] || { "$NODE" -e "fetch('http://127.0.0.1:$PORT/readyz').then(r => r.text()).then(console.log, console.log)"; fail "/readyz never answered 200"; }
echo "smoke: /readyz 200 from the packaged server on the bundled Node"

# The packaged CLI: an online backup while the server runs, and the readiness wait the unit uses.
env -i PATH=/usr/bin:/bin PLACARD_DATA_DIR="$ROOT/var/lib/placard" PLACARD_PORT="$PORT" "$NODE" "$CURRENT/dist/server/src/cli.js" wait-ready --timeout 10 || fail "cli wait-ready"
backup=$(env -i PATH=/usr/bin:/bin PLACARD_DATA_DIR="$ROOT/var/lib/placard" "$NODE" "$CURRENT/dist/server/src/cli.js" backup --no-media 2>/dev/null) || fail "cli backup"
[ -s "$backup" ] || fail "the backup file is missing"
echo "smoke: placard backup wrote $(basename "$backup")"

kill -TERM "$PID"
status=0
wait "$PID" || status=$?
PID=""
[ "$status" = 0 ] || fail "the server did not stop cleanly on SIGTERM (exit $status)"
grep -q 'stopped cleanly' "$LOG" || fail "no clean stop in the log"
echo "smoke: stopped cleanly on SIGTERM"
echo "smoke: OK"
