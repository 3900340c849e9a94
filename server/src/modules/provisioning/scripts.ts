/**
 * The Linux player installer and its systemd unit, rendered with this server's URL.
 * Placeholders `@@NAME@@` are replaced with values checked by `safeServerUrl`, so nothing
 * from a request can break out of the shell's single quotes.
 */

/** An http(s) origin-plus-path URL made only of characters safe inside sh single quotes. */
export function safeServerUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash) return null;
  const out = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  return /^[A-Za-z0-9:/.\-[\]_~%]+$/.test(out) ? out : null;
}

export function originOf(url: string): string {
  return new URL(url).origin;
}

const PLAYER_SERVICE = `# Placard Linux player: Chromium in kiosk mode on @@SERVER_URL@@/play
# Installed by @@SERVER_URL@@/install.sh as /etc/systemd/system/placard-player.service.
# The server address lives in /etc/placard-player/player.env.
[Unit]
Description=Placard player (Chromium kiosk)
Documentation=@@SERVER_URL@@/install/player.service
After=systemd-user-sessions.service network-online.target plymouth-quit-wait.service
Wants=network-online.target
Conflicts=getty@tty1.service
StartLimitIntervalSec=0

[Service]
Type=simple
User=placard-player
Group=placard-player
PAMName=login
TTYPath=/dev/tty1
TTYReset=yes
TTYVHangup=yes
StandardInput=tty
StandardOutput=journal
StandardError=journal
UtmpIdentifier=tty1
UtmpMode=user
EnvironmentFile=/etc/placard-player/player.env
Environment=XDG_SESSION_TYPE=wayland
ExecStart=/usr/local/bin/placard-player
Restart=always
RestartSec=5
NoNewPrivileges=yes
ProtectSystem=full
PrivateTmp=yes

[Install]
WantedBy=graphical.target
`;

const INSTALL_SCRIPT = String.raw`#!/bin/sh
# Placard Linux player installer, served by @@SERVER_URL@@/install.sh
#
#   curl -fsSL @@SERVER_URL@@/install.sh | sudo sh
#
# Turns this box (Debian 12+, Ubuntu 22.04+, Raspberry Pi OS; x86_64 or aarch64) into a
# Placard screen: installs Chromium and the cage kiosk compositor from the distribution,
# creates the placard-player user, and starts Chromium full screen on
# @@SERVER_URL@@/play?kiosk=1 under the placard-player.service unit on tty1. The screen
# then shows a pairing code: enter it in the console (Screens > Pair).
# Idempotent: run it again to repair or to point the screen at another server.
#
# Options: --server URL (another Placard server), --no-start, --root DIR (write the files
# into DIR as if it were /, install and start nothing; for tests).
set -eu

SERVER_URL='@@SERVER_URL@@'
ROOT=""
START=1
PLAYER_USER=placard-player

say() { printf 'placard-player: %s\n' "$*"; }
die() { printf 'placard-player: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --server) [ $# -ge 2 ] || die "--server needs a URL"; SERVER_URL=$2; shift 2 ;;
    --server=*) SERVER_URL=${'$'}{1#--server=}; shift ;;
    --root) [ $# -ge 2 ] || die "--root needs a directory"; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${'$'}{1#--root=}; shift ;;
    --no-start) START=0; shift ;;
    -h|--help) sed -n '2,16p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
done

case "$SERVER_URL" in
  http://*|https://*) ;;
  *) die "the server URL must start with http:// or https://" ;;
esac
case "$SERVER_URL" in
  *"'"*|*' '*|*'"'*|*\\*) die "the server URL contains characters that are not allowed" ;;
esac
SERVER_URL=${'$'}{SERVER_URL%/}
# scheme://host[:port] without the path: what Chromium must treat as a secure origin.
ORIGIN=$(printf '%s\n' "$SERVER_URL" | sed 's#^\(https\{0,1\}://[^/]*\).*#\1#')
PLAYER_URL="$SERVER_URL/play?kiosk=1"

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  START=0
  say "writing into $ROOT (nothing is installed or started)"
elif [ "$(id -u)" != 0 ]; then
  die "run as root: curl -fsSL $SERVER_URL/install.sh | sudo sh"
fi

fetch() {
  if have curl; then curl -fsSL --retry 3 "$1"
  elif have wget; then wget -qO- "$1"
  else die "neither curl nor wget is installed"
  fi
}

# 1. Chromium and the kiosk compositor, from the distribution.
if [ -z "$ROOT" ]; then
  have apt-get || die "this installer needs apt (Debian, Ubuntu, Raspberry Pi OS)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || say "warning: apt-get update failed; trying with the lists there are"
  browser_pkg=chromium
  if ! apt-cache show chromium >/dev/null 2>&1; then browser_pkg=chromium-browser; fi
  say "installing $browser_pkg and cage"
  apt-get install -y -q --no-install-recommends "$browser_pkg" cage fonts-dejavu-core ca-certificates dbus-user-session >/dev/null ||
    die "could not install $browser_pkg and cage"
fi

# 2. The kiosk user.
if ! awk -F: -v u="$PLAYER_USER" '$1 == u { found = 1 } END { exit !found }' "$ROOT/etc/passwd" 2>/dev/null; then
  if [ -z "$ROOT" ]; then
    groups=""
    for g in video audio input render; do
      if getent group "$g" >/dev/null 2>&1; then groups="$groups${'$'}{groups:+,}$g"; fi
    done
    useradd --system --user-group --create-home --home-dir /var/lib/placard-player --shell /usr/sbin/nologin ${'$'}{groups:+--groups "$groups"} --comment "Placard player" "$PLAYER_USER"
  else
    mkdir -p "$ROOT/etc"
    touch "$ROOT/etc/passwd" "$ROOT/etc/group"
    uid=998
    while awk -F: -v id="$uid" '$3 == id { found = 1 } END { exit !found }' "$ROOT/etc/passwd" "$ROOT/etc/group"; do uid=$((uid - 1)); done
    printf '%s:x:%s:%s:Placard player:/var/lib/placard-player:/usr/sbin/nologin\n' "$PLAYER_USER" "$uid" "$uid" >>"$ROOT/etc/passwd"
    printf '%s:x:%s:\n' "$PLAYER_USER" "$uid" >>"$ROOT/etc/group"
  fi
  say "created the $PLAYER_USER user"
fi
mkdir -p "$ROOT/var/lib/placard-player"
if [ -z "$ROOT" ]; then chown "$PLAYER_USER:$PLAYER_USER" "$ROOT/var/lib/placard-player"; fi

# 3. Which server, and the launcher.
mkdir -p "$ROOT/etc/placard-player" "$ROOT/usr/local/bin" "$ROOT/etc/systemd/system"
cat >"$ROOT/etc/placard-player/player.env" <<EOF
# Written by $SERVER_URL/install.sh. Run the installer again to change the server.
PLACARD_SERVER_URL=$SERVER_URL
PLACARD_PLAYER_URL=$PLAYER_URL
PLACARD_ORIGIN=$ORIGIN
EOF
cat >"$ROOT/usr/local/bin/placard-player" <<'EOF'
#!/bin/sh
# Placard player launcher: Chromium in kiosk mode inside the cage compositor.
# The page reports playerFamily desktop-linux (kiosk=1). Plain-http LAN servers are treated
# as secure origins so the player's service worker, Cache Storage and Web Crypto work.
set -eu
: "${'$'}{PLACARD_PLAYER_URL:?set in /etc/placard-player/player.env}"
: "${'$'}{PLACARD_ORIGIN:?set in /etc/placard-player/player.env}"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
[ -n "$browser" ] || { echo "placard-player: Chromium is not installed" >&2; exit 1; }
profile="${'$'}{HOME:-/var/lib/placard-player}/chromium"
mkdir -p "$profile"
# A crash must not leave a "restore pages?" bubble over the screen.
sed -i 's/"exit_type":"Crashed"/"exit_type":"Normal"/' "$profile/Default/Preferences" 2>/dev/null || true
exec cage -s -- "$browser" \
  --kiosk --noerrdialogs --disable-infobars --no-first-run --disable-session-crashed-bubble \
  --disable-features=Translate,InfiniteSessionRestore --autoplay-policy=no-user-gesture-required \
  --check-for-update-interval=31536000 --password-store=basic --ozone-platform=wayland \
  --user-data-dir="$profile" \
  --unsafely-treat-insecure-origin-as-secure="$PLACARD_ORIGIN" \
  "$PLACARD_PLAYER_URL"
EOF
chmod 0755 "$ROOT/usr/local/bin/placard-player"

# 4. The unit: beside this script when unpacked from the artifact, else from the server.
here=$(dirname "$0" 2>/dev/null || echo .)
if [ -f "$here/player.service" ]; then
  cp "$here/player.service" "$ROOT/etc/systemd/system/placard-player.service.tmp"
else
  fetch "$SERVER_URL/install/player.service" >"$ROOT/etc/systemd/system/placard-player.service.tmp" ||
    die "could not download $SERVER_URL/install/player.service"
fi
grep -q '^ExecStart=/usr/local/bin/placard-player$' "$ROOT/etc/systemd/system/placard-player.service.tmp" ||
  die "the downloaded unit is not a Placard player unit"
mv "$ROOT/etc/systemd/system/placard-player.service.tmp" "$ROOT/etc/systemd/system/placard-player.service"
chmod 0644 "$ROOT/etc/systemd/system/placard-player.service"
mkdir -p "$ROOT/etc/systemd/system/graphical.target.wants"
ln -sfn /etc/systemd/system/placard-player.service "$ROOT/etc/systemd/system/graphical.target.wants/placard-player.service"

# 5. Start.
if [ "$START" = 1 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl disable getty@tty1.service >/dev/null 2>&1 || true
  systemctl set-default graphical.target >/dev/null 2>&1 || true
  systemctl enable placard-player.service >/dev/null 2>&1
  systemctl restart placard-player.service
  say "started: this screen now shows a pairing code from $SERVER_URL"
else
  say "installed; start it with: systemctl enable --now placard-player"
fi
say "player page: $PLAYER_URL"
`;

function render(template: string, serverUrl: string): string {
  // ${"$"} in the templates above writes a literal "$" before "{" without a JS interpolation.
  return template.replaceAll('@@SERVER_URL@@', serverUrl);
}

export function playerInstallScript(serverUrl: string): string {
  return render(INSTALL_SCRIPT, serverUrl);
}

export function playerServiceUnit(serverUrl: string): string {
  return render(PLAYER_SERVICE, serverUrl);
}

/** The mirroring receiver installer: downloads the admin-provided binary, checks it, runs it as a service. */
export function mirroringInstallScript(serverUrl: string, sha256: string): string {
  return String.raw`#!/bin/sh
# Placard mirroring receiver installer, served by ${serverUrl}/install-mirroring.sh
#   curl -fsSL ${serverUrl}/install-mirroring.sh | sudo sh
# Downloads the receiver binary this server's admin provided, checks its sha256, installs it
# as /usr/local/bin/placard-mirroring-receiver and runs it under placard-mirroring.service.
set -eu
SERVER_URL='${serverUrl}'
EXPECTED='${sha256}'
say() { printf 'placard-mirroring: %s\n' "$*"; }
die() { printf 'placard-mirroring: error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if command -v curl >/dev/null 2>&1; then curl -fsSL --retry 3 -o "$tmp" "$SERVER_URL/api/v1/install/mirroring/receiver"
else wget -qO "$tmp" "$SERVER_URL/api/v1/install/mirroring/receiver"; fi
got=$(sha256sum "$tmp" | cut -d' ' -f1)
[ "$got" = "$EXPECTED" ] || die "checksum mismatch (got $got, expected $EXPECTED)"
install -m 0755 "$tmp" /usr/local/bin/placard-mirroring-receiver
id placard-player >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin placard-player
cat >/etc/systemd/system/placard-mirroring.service <<EOF
[Unit]
Description=Placard mirroring receiver
After=network-online.target
Wants=network-online.target
[Service]
User=placard-player
Environment=PLACARD_SERVER_URL=$SERVER_URL
ExecStart=/usr/local/bin/placard-mirroring-receiver
Restart=always
RestartSec=5
NoNewPrivileges=yes
[Install]
WantedBy=multi-user.target
EOF
systemctl daemon-reload
systemctl enable --now placard-mirroring.service
say "installed and started the mirroring receiver"
`;
}
