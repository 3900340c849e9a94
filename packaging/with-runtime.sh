#!/usr/bin/env bash
# Runs a command on the runtime the release package bundles (packaging/node-version), not the
# machine's Node: that runtime's bin/ first on PATH, and this checkout's better-sqlite3 addon
# swapped for the one built against that runtime's headers (runtime.sh: compiled once,
# verified by loading it, cached). The checkout's own addon is put back afterwards, so
# `npm start` on the machine's Node keeps working.
# Usage: bash packaging/with-runtime.sh npm test
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=packaging/runtime.sh disable=SC1091
. packaging/runtime.sh
[ $# -gt 0 ] || { echo "usage: with-runtime.sh COMMAND [ARGS...]" >&2; exit 2; }
ARCH=$(runtime_host_arch)
NODE_DIR=$(runtime_node_dir "$ARCH")
BS3=node_modules/better-sqlite3
[ -f "$BS3/package.json" ] || { echo "with-runtime: run npm ci first" >&2; exit 1; }
ADDON=$(runtime_addon "$ARCH" "$PWD/$BS3")
TARGET="$BS3/build/Release/better_sqlite3.node"
SAVED="$BS3/build/Release/better_sqlite3.node.machine"
mkdir -p "$(dirname "$TARGET")"
if [ -f "$TARGET" ] && [ ! -f "$SAVED" ]; then mv "$TARGET" "$SAVED"; fi
# shellcheck disable=SC2317 # called by the trap
restore() { if [ -f "$SAVED" ]; then mv -f "$SAVED" "$TARGET"; fi; }
trap restore EXIT
cp "$ADDON" "$TARGET"
export PATH="$NODE_DIR/bin:$PATH"
echo "with-runtime: node $(node --version) ($NODE_DIR), better-sqlite3 addon for ABI $(runtime_abi "$NODE_DIR")" >&2
status=0
"$@" || status=$?
exit "$status"
