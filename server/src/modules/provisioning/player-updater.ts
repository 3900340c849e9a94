/**
 * The Linux player's updater (docs/player-updates.md), installed by the installer as
 * /usr/local/bin/placard-player-update and run by placard-player-update.timer: applies the
 * desktop-linux releases a deployment offers this screen.
 */
export const PLAYER_UPDATER = String.raw`#!/bin/sh
# Placard player updater: installed by the Placard installer as /usr/local/bin/placard-player-update
# and run by placard-player-update.timer (docs/player-updates.md). Asks the server whether a
# desktop-linux release is offered to this screen (GET /api/v1/player/config, with the screen's
# device credential), asks for its artifact for this machine's architecture (uname -m),
# downloads it with resume and checks its sha256, installs it (a tarball:
# /opt/placard-player/<version> and the "current" link; a .deb: dpkg -i), restarts the kiosk
# and reports each step to the deployment. The credential: PLACARD_DEVICE_CREDENTIAL in
# /etc/placard-player/updater.env, else the one the kiosk's page keeps in its Chromium profile.
#
#   placard-player-update [--root DIR] [--no-restart]
set -eu

ROOT=""
RESTART=1
say() { printf 'placard-player-update: %s\n' "$*"; }
die() { printf 'placard-player-update: error: %s\n' "$*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || die "--root needs a value"; ROOT=$2; shift 2 ;;
    --no-restart) RESTART=0; shift ;;
    *) die "unknown option $1" ;;
  esac
done

ENV_FILE="$ROOT/etc/placard-player/player.env"
UPDATER_ENV="$ROOT/etc/placard-player/updater.env"
VERSION_FILE="$ROOT/etc/placard-player/version"
STATE="$ROOT/var/lib/placard-player-update"
OPT="$ROOT/opt/placard-player"
STORAGE="$ROOT/var/lib/placard-player/chromium/Default/Local Storage/leveldb"

setting() { sed -n "s/^$1=//p" "$2" 2>/dev/null | tail -n 1; }
[ -f "$ENV_FILE" ] || die "$ENV_FILE is missing: run the installer"
SERVER_URL=$(setting PLACARD_SERVER_URL "$ENV_FILE")
PINS=$(setting PLACARD_PINS "$ENV_FILE")
case "$SERVER_URL" in http://*|https://*) ;; *) die "no server URL in $ENV_FILE" ;; esac
command -v curl >/dev/null 2>&1 || die "curl is needed: apt-get install curl"
umask 077
mkdir -p "$STATE"
chmod 0700 "$STATE"
# curl's --pinnedpubkey from the installer's list (base64, comma-separated).
PINNED=""
if [ -n "$PINS" ]; then PINNED=$(printf '%s' "$PINS" | sed 's#^#sha256//#; s#,#;sha256//#g'); fi

# request METHOD PATH [JSON]: the answer's body in $STATE/body, its HTTP status in $STATUS
# (000: no answer). The credential goes in a header file, never on a command line.
request() {
  if [ $# -ge 3 ]; then
    set -- -sS -o "$STATE/body" -w '%{http_code}' -X "$1" -H @"$STATE/auth" -H 'Accept: application/json' -H 'Content-Type: application/json' --data-binary "$3" "$SERVER_URL$2"
  else
    set -- -sS -o "$STATE/body" -w '%{http_code}' -X "$1" -H @"$STATE/auth" -H 'Accept: application/json' "$SERVER_URL$2"
  fi
  if [ -n "$PINNED" ]; then set -- --proto '=https' -k --pinnedpubkey "$PINNED" "$@"; fi
  STATUS=$(curl --max-time 60 "$@" 2>"$STATE/curl.err") || STATUS=000
}
use_credential() { printf 'Authorization: Bearer %s\n' "$1" >"$STATE/auth"; }
CREDENTIAL_RE='svc_device_[A-Za-z0-9_-]{8,64}\.[A-Za-z0-9_-]{20,256}'

# 1. The screen's credential, and its config.
cred=$(setting PLACARD_DEVICE_CREDENTIAL "$UPDATER_ENV")
STATUS=401
if [ -n "$cred" ]; then
  printf '%s\n' "$cred" | grep -Eqx "$CREDENTIAL_RE" || die "PLACARD_DEVICE_CREDENTIAL in $UPDATER_ENV is not a device credential"
  use_credential "$cred"
  request GET /api/v1/player/config
elif [ -d "$STORAGE" ]; then
  # The kiosk's page keeps it in localStorage (Chromium's LevelDB files): the newest files
  # first, the last copy in each first; the first the server accepts is this screen's.
  # shellcheck disable=SC2012
  for cred in $(ls -t "$STORAGE" | while IFS= read -r f; do
    tr -d '\000' <"$STORAGE/$f" | grep -aoE "$CREDENTIAL_RE" | awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }'
  done | awk '!seen[$0]++' | head -n 20); do
    use_credential "$cred"
    request GET /api/v1/player/config
    [ "$STATUS" != 200 ] || break
  done
fi
case "$STATUS" in
  200) ;;
  000) die "the server $SERVER_URL did not answer: $(cat "$STATE/curl.err" 2>/dev/null)" ;;
  401|403) die "no device credential the server accepts (pair this screen first, or set PLACARD_DEVICE_CREDENTIAL in $UPDATER_ENV)" ;;
  *) die "GET /api/v1/player/config answered HTTP $STATUS" ;;
esac

# Flat JSON objects and their string fields, as the server writes them (one line, no spaces).
json_object() { sed -n "s/.*\"$1\":{\([^{}]*\)}.*/\1/p" "$2" | head -n 1; }
json_string() { printf '%s\n' "$2" | sed -n "s/.*\"$1\":\"\([^\"\\\\]*\)\".*/\1/p" | head -n 1; }
json_number() { printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" | head -n 1; }

# 2. An update offered to this screen?
offer=$(json_object update "$STATE/body")
if [ -z "$offer" ]; then say "no update offered"; exit 0; fi
family=$(json_string family "$offer")
deployment=$(json_string deploymentId "$offer")
release=$(json_string releaseId "$offer")
version=$(json_string version "$offer")
if [ "$family" != desktop-linux ]; then say "the update offered is for the $family player, not this one"; exit 0; fi
case "$deployment$release" in ''|*[!A-Za-z0-9-]*) die "the offer names no deployment or release" ;; esac
case "$version" in ''|*[!A-Za-z0-9.+-]*) die "the offer's version is not a version" ;; esac

# status STATE [JSON fields]: reports to the deployment; a cancelled one ends the run.
status() {
  request POST "/api/v1/player/update-deployments/$deployment/status" "{\"state\":\"$1\"${'$'}{2:+,$2}}"
  case "$STATUS" in
    200) ;;
    409|404) die "the deployment no longer offers this update (HTTP $STATUS: $(cat "$STATE/body"))" ;;
    *) say "warning: reporting $1 answered HTTP $STATUS" ;;
  esac
}
fail() {
  say "$1"
  # shellcheck disable=SC1003
  status failed "\"error\":\"$(printf '%s' "$1" | tr -d '"\\' | tr '\n' ' ' | cut -c1-400)\""
  die "$1"
}
current=$(cat "$VERSION_FILE" 2>/dev/null || true)
if [ "$current" = "$version" ]; then
  status installed "\"version\":\"$version\""
  say "version $version is installed"
  exit 0
fi

# 3. The release: its artifact for this machine's architecture (uname -m, as releases name it;
# another one asks without, and gets the release's "any" or only artifact).
machine=$(uname -m 2>/dev/null || true)
case "$machine" in
  x86_64) ARCH=x86_64 ;;
  aarch64|arm64) ARCH=aarch64 ;;
  *) ARCH="" ;;
esac
request GET "/api/v1/player/updates/$release${'$'}{ARCH:+?architecture=$ARCH}"
case "$STATUS" in
  200) ;;
  400|404)
    why=$(json_string message "$(cat "$STATE/body")")
    fail "no artifact of this release for this ${'$'}{machine:-unknown} machine (HTTP $STATUS: ${'$'}{why:-no reason given})" ;;
  *) die "GET /api/v1/player/updates/$release answered HTTP $STATUS" ;;
esac
artifact=$(json_object artifact "$STATE/body")
arch=$(json_string architecture "$artifact")
if [ -n "$ARCH" ] && [ "$arch" != "$ARCH" ] && [ "$arch" != any ]; then fail "the server offered the $arch artifact to this $ARCH machine"; fi
kind=$(json_string kind "$artifact")
sha=$(json_string sha256 "$artifact")
size=$(json_number sizeBytes "$artifact")
url=$(json_string url "$artifact")
case "$kind" in tarball|deb) ;; *) fail "a $kind artifact cannot be installed by the Linux player" ;; esac
printf '%s\n' "$sha" | grep -Eqx '[0-9a-f]{64}' || fail "the release names no sha256"
[ -n "$size" ] || fail "the release names no size"
printf '%s\n' "$url" | grep -Eqx '/api/v1/player/updates/[A-Za-z0-9-]+/artifact(\?architecture=(x86_64|aarch64))?' || fail "the release's download URL is not this server's"

# 4. Download, resuming what an earlier run left (curl -C -), then check every byte.
part="$STATE/$release.part"
have() { if [ -f "$part" ]; then wc -c <"$part" | tr -d ' '; else echo 0; fi; }
ratio() { awk -v h="$1" -v s="$2" 'BEGIN { r = s > 0 ? h / s : 0; if (r > 1) r = 1; printf "%.3f", r }'; }
got=$(have)
if [ "$got" -gt "$size" ]; then rm -f "$part"; got=0; fi
status downloading "\"progress\":$(ratio "$got" "$size")"
if [ "$got" -lt "$size" ]; then
  [ "$got" = 0 ] || say "resuming the download at $got of $size bytes"
  set -- -fsS --max-time 3600 -C - -o "$part" -H @"$STATE/auth" "$SERVER_URL$url"
  if [ -n "$PINNED" ]; then set -- --proto '=https' -k --pinnedpubkey "$PINNED" "$@"; fi
  if ! curl "$@" 2>"$STATE/curl.err"; then
    say "the download stopped at $(have) of $size bytes ($(cat "$STATE/curl.err")); the next run resumes it"
    exit 1
  fi
fi
sum=$(sha256sum "$part" | cut -d' ' -f1)
if [ "$sum" != "$sha" ]; then
  rm -f "$part"
  fail "the download's sha256 is $sum, not the release's $sha (deleted; the next run downloads it again)"
fi
status downloading '"progress":1'
status downloaded
status installing

# 5. Install: a tarball into its own directory, then the link moves; a .deb through dpkg.
mkdir -p "$OPT"
if [ "$kind" = tarball ]; then
  tar -tzf "$part" >"$STATE/list" 2>/dev/null || fail "the artifact is not a gzip tarball"
  if grep -Eq '(^/|(^|/)\.\.(/|$))' "$STATE/list"; then fail "the tarball names files outside its directory"; fi
  if tar -tvzf "$part" | grep -q '^[^-d]'; then fail "the tarball holds links or devices"; fi
  tmp="$OPT/.$version.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  tar -xzf "$part" -C "$tmp" --no-same-owner || fail "the tarball did not extract"
  chmod 0755 "$tmp"
  rm -rf "${'$'}{OPT:?}/$version"
  mv "$tmp" "$OPT/$version"
  ln -sfn "$version" "$OPT/.current.tmp"
  mv -T "$OPT/.current.tmp" "$OPT/current"
  # Keep the one before (to go back by hand), not older ones.
  previous=$(printf '%s\n' "$current" | grep -Ex '[A-Za-z0-9.+-]+' || true)
  for d in "$OPT"/*; do
    n=$(basename "$d")
    if [ -d "$d" ] && [ ! -L "$d" ] && [ "$n" != "$version" ] && [ "$n" != "$previous" ]; then rm -rf "$d"; fi
  done
else
  cp "$part" "$STATE/$release.deb"
  if ! dpkg -i "$STATE/$release.deb" >"$STATE/dpkg.log" 2>&1; then
    rm -f "$STATE/$release.deb"
    fail "dpkg -i failed: $(tail -n 3 "$STATE/dpkg.log" | tr '\n' ' ')"
  fi
  rm -f "$STATE/$release.deb"
fi
rm -f "$part"
printf '%s\n' "$version" >"$VERSION_FILE.tmp"
chmod 0644 "$VERSION_FILE.tmp"
mv "$VERSION_FILE.tmp" "$VERSION_FILE"

# 6. The kiosk starts again with the new version (the launcher passes it to the page).
if [ "$RESTART" = 1 ]; then
  systemctl restart placard-player.service || say "warning: could not restart placard-player.service"
fi
status installed "\"version\":\"$version\""
say "installed version $version"
`;

export const UPDATER_SERVICE = `# Placard player updater: applies desktop-linux releases offered to this screen.
# Installed by the Placard installer; run by placard-player-update.timer. Do not edit.
[Unit]
Description=Placard player updater
After=network-online.target
Wants=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/local/bin/placard-player-update
PrivateTmp=yes
ProtectHome=yes
TimeoutStartSec=3900
`;

export const UPDATER_TIMER = `# Placard player updater: asks the server for an update every 5 minutes.
[Unit]
Description=Placard player updater (every 5 minutes)

[Timer]
OnBootSec=2min
OnUnitActiveSec=5min
RandomizedDelaySec=30

[Install]
WantedBy=timers.target
`;
