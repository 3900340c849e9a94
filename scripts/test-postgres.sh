#!/usr/bin/env bash
# The route and repository tests again, on PostgreSQL (issue 25; docs/operations.md
# "Scaling out"): starts a throwaway cluster (scripts/pg-cluster.sh), points the test
# harness at it (PLACARD_TEST_DATABASE_URL: each test gets a database of its own) and
# runs every test file that starts the app or asks for PostgreSQL, except the browser tests (console-*, play-*,
# player-e2e: they drive the same routes through Chromium; run them here by naming them)
# and those listed in test/postgres-excluded.txt with their reason. Extra arguments are
# passed to tap (file names replace the selection).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${PLACARD_PG_DIR:-/tmp/placard-pg-test}
port=${PLACARD_PG_PORT:-55433}
url=$(bash scripts/pg-cluster.sh start "$dir" "$port") || { echo "could not start PostgreSQL"; exit 1; }
export PLACARD_TEST_DATABASE_URL=$url
files=()
if ! printf '%s\n' "$@" | grep -q '\.test\.ts$'; then
  excluded=$(grep -v '^\s*#' test/postgres-excluded.txt | awk '{print $1}' | grep .)
  while IFS= read -r f; do
    case "$f" in test/console-*|test/play-*|test/player-e2e.test.ts) continue ;; esac
    if printf '%s\n' "$excluded" | grep -qx "$f"; then continue; fi
    files+=("$f")
  done < <(grep -l 'startApp\|testDatabase(\|TEST_DATABASE_URL\|freshPostgresDatabase' test/*.test.ts)
fi
echo "PostgreSQL at $url: ${#files[@]} test files"
npx tap "${files[@]}" "$@"
status=$?
bash scripts/pg-cluster.sh stop "$dir"
exit $status
