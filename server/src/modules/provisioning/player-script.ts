import { createHash } from 'node:crypto';
import { PLAYER_UPDATER, UPDATER_SERVICE, UPDATER_TIMER } from './player-updater.js';
import { render, type ScriptTarget } from './scripts.js';

/** The Linux player installer and its systemd unit (docs/player.md). */
const PLAYER_SERVICE = `# Placard Linux player: Chromium in kiosk mode (cage compositor) on tty1.
# Installed by the Placard installer (<server>/install.sh) as /etc/systemd/system/placard-player.service;
# the server address is in /etc/placard-player/player.env. Do not edit: the installer replaces it.
[Unit]
Description=Placard player (Chromium kiosk)
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
# The home (Chromium's profile, the screen's credential) and the Wayland socket's directory
# (the launcher uses it as XDG_RUNTIME_DIR: /run/user is hidden by ProtectHome).
StateDirectory=placard-player
StateDirectoryMode=0700
RuntimeDirectory=placard-player
RuntimeDirectoryMode=0700
UMask=0077

# Hardening. Left out on purpose: PrivateDevices, DevicePolicy and ProtectClock (which adds a
# device allow-list): cage needs the GPU, input and tty devices logind hands it;
# MemoryDenyWriteExecute: Chromium's JavaScript JIT; PrivateUsers and RestrictNamespaces=yes:
# Chromium's sandbox makes user, pid and net namespaces; SystemCallFilter=@system-service:
# Chromium's own seccomp sandbox uses calls outside it (only groups it never uses are denied);
# PrivateNetwork and IP filters: it shows web pages from anywhere.
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectHostname=yes
ProtectProc=invisible
CapabilityBoundingSet=
AmbientCapabilities=
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictNamespaces=user pid net
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RemoveIPC=yes
SystemCallArchitectures=native
SystemCallFilter=~@clock @cpu-emulation @module @obsolete @raw-io @reboot @swap
SystemCallErrorNumber=EPERM

[Install]
WantedBy=graphical.target
`;

export const PLAYER_SERVICE_SHA256 = createHash('sha256').update(PLAYER_SERVICE).digest('hex');

const INSTALL_SCRIPT = String.raw`#!/bin/sh
# Placard Linux player installer, served by @@SERVER_URL@@/install.sh
#
#   @@COMMAND@@
#
# Turns this box (Debian 12+, Raspberry Pi OS Lite or Desktop; x86_64 or aarch64) into a
# Placard screen: installs Chromium and the cage kiosk compositor from the distribution,
# creates the placard-player user, and starts Chromium full screen on the server's /play page
# under placard-player.service on tty1. The screen then shows a pairing code: enter it in
# the console (Screens > Add screen). Run it again to repair or change a setting.
# Everything it downloads comes from the server over HTTPS with the server's key pinned
# (--pin) and is checked against the sha256 this script carries (docs/trust.md).
# An updater (placard-player-update.timer) applies the desktop-linux releases the server's
# update deployments offer this screen (docs/player-updates.md).
#
# Options:
#   --pin PINS             the server's keys, sha256//BASE64[;sha256//BASE64] (the console shows them)
#   --server URL           another Placard server (with its --pin); its unit must match this installer's
#   --rotate 0|90|180|270  turn the picture clockwise (portrait screens)
#   --screen-blanking off|on  off (default): the screen never blanks or powers down by itself
#   --replace-desktop      on a desktop system (Raspberry Pi OS Desktop: lightdm), turn the desktop
#                          off so the player gets the screen (--uninstall turns it back on)
#   --uninstall            remove the player, its user and its data (the screen's credential)
#   --no-start             install, start nothing
#   --root DIR             write into DIR as if it were /, install and start nothing (tests)
set -eu

SERVER_URL='@@SERVER_URL@@'
PIN='@@PIN@@'
UNIT_SHA256='@@UNIT_SHA256@@'
ROOT=""
START=1
ACTION=install
ROTATE=""
BLANKING=""
REPLACE_DESKTOP=0
PLAYER_USER=placard-player
UNIT=/etc/systemd/system/placard-player.service

say() { printf 'placard-player: %s\n' "$*"; }
die() { printf 'placard-player: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
need_value() { [ $# -ge 2 ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --server) need_value "$@"; SERVER_URL=$2; shift 2 ;;
    --server=*) SERVER_URL=${'$'}{1#--server=}; shift ;;
    --pin) need_value "$@"; PIN=$2; shift 2 ;;
    --pin=*) PIN=${'$'}{1#--pin=}; shift ;;
    --rotate) need_value "$@"; ROTATE=$2; shift 2 ;;
    --rotate=*) ROTATE=${'$'}{1#--rotate=}; shift ;;
    --screen-blanking) need_value "$@"; BLANKING=$2; shift 2 ;;
    --screen-blanking=*) BLANKING=${'$'}{1#--screen-blanking=}; shift ;;
    --replace-desktop) REPLACE_DESKTOP=1; shift ;;
    --uninstall) ACTION=uninstall; shift ;;
    --root) need_value "$@"; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${'$'}{1#--root=}; shift ;;
    --no-start) START=0; shift ;;
    -h|--help) sed -n '2,25p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
done

case "$SERVER_URL" in
  http://*|https://*) ;;
  *) die "the server URL must start with http:// or https://" ;;
esac
case "$SERVER_URL" in
  *"'"*|*' '*|*'"'*|*\\*|*'$'*|*'${'`'}'*) die "the server URL contains characters that are not allowed" ;;
esac
SERVER_URL=${'$'}{SERVER_URL%/}

# A pin is one or more sha256//<44 base64 characters>, joined by ';'.
pin_ok() {
  rest=$1
  while :; do
    part=${'$'}{rest%%;*}
    case "$part" in
      sha256//????????????????????????????????????????????) ;;
      *) return 1 ;;
    esac
    case "${'$'}{part#sha256//}" in *[!A-Za-z0-9+/=]*) return 1 ;; esac
    [ "$rest" != "$part" ] || return 0
    rest=${'$'}{rest#*;}
  done
}
if [ -n "$PIN" ]; then
  pin_ok "$PIN" || die "--pin must look like sha256//BASE64 (several joined by ;): copy it from the console"
  case "$SERVER_URL" in https://*) ;; *) die "a pinned key needs an https:// server URL" ;; esac
fi
case "$ROTATE" in ''|0|90|180|270) ;; *) die "--rotate takes 0, 90, 180 or 270" ;; esac
case "$BLANKING" in ''|on|off) ;; *) die "--screen-blanking takes on or off" ;; esac

# scheme://host[:port] without the path: what Chromium must treat as a secure origin on plain http.
ORIGIN=$(printf '%s\n' "$SERVER_URL" | sed 's#^\(https\{0,1\}://[^/]*\).*#\1#')
PLAYER_URL="$SERVER_URL/play?kiosk=1"

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  START=0
  say "writing into $ROOT (nothing is installed or started)"
elif [ "$(id -u)" != 0 ]; then
  die "run as root (sudo)"
fi
ENV_FILE="$ROOT/etc/placard-player/player.env"
DESKTOP_FILE="$ROOT/etc/placard-player/replaced-desktop"

# Runs systemctl on a real install only.
sysctl_() { if [ -z "$ROOT" ] && [ -d /run/systemd/system ]; then systemctl "$@"; fi; }

if [ "$ACTION" = uninstall ]; then
  sysctl_ disable --now placard-player.service >/dev/null 2>&1 || true
  sysctl_ disable --now placard-player-update.timer >/dev/null 2>&1 || true
  rm -f "$ROOT$UNIT" "$ROOT/etc/systemd/system/graphical.target.wants/placard-player.service" "$ROOT/usr/local/bin/placard-player"
  rm -f "$ROOT/etc/systemd/system/placard-player-update.service" "$ROOT/etc/systemd/system/placard-player-update.timer" \
    "$ROOT/etc/systemd/system/timers.target.wants/placard-player-update.timer" "$ROOT/usr/local/bin/placard-player-update"
  rm -rf "$ROOT/opt/placard-player" "$ROOT/var/lib/placard-player-update"
  if [ -f "$DESKTOP_FILE" ]; then
    target=$(cat "$DESKTOP_FILE")
    if [ -n "$ROOT" ]; then ln -sfn "$target" "$ROOT/etc/systemd/system/display-manager.service"
    else sysctl_ enable "$(basename "$target")" >/dev/null 2>&1 || say "warning: could not enable $(basename "$target") again"; fi
    say "turned the desktop ($(basename "$target")) back on"
  fi
  sysctl_ enable getty@tty1.service >/dev/null 2>&1 || true
  rm -rf "$ROOT/etc/placard-player"
  if [ -z "$ROOT" ]; then
    if id "$PLAYER_USER" >/dev/null 2>&1; then userdel "$PLAYER_USER" 2>/dev/null || say "warning: could not remove the $PLAYER_USER user"; fi
  else
    for f in passwd group; do
      if [ -f "$ROOT/etc/$f" ]; then
        awk -F: -v u="$PLAYER_USER" '$1 != u' "$ROOT/etc/$f" >"$ROOT/etc/$f.tmp" && mv "$ROOT/etc/$f.tmp" "$ROOT/etc/$f"
      fi
    done
  fi
  # The home holds Chromium's profile with the screen's credential.
  rm -rf "$ROOT/var/lib/placard-player"
  sysctl_ daemon-reload || true
  say "removed the player, its user and its data; revoke the screen in the console (Screens) if it is not coming back"
  exit 0
fi

# Settings not given keep what the last run wrote.
kept() { sed -n "s/^$1=//p" "$ENV_FILE" 2>/dev/null | tail -n 1; }
[ -n "$ROTATE" ] || ROTATE=$(kept PLACARD_ROTATE)
[ -n "$BLANKING" ] || BLANKING=$(kept PLACARD_SCREEN_BLANKING)
case "$ROTATE" in 0|90|180|270) ;; *) ROTATE=0 ;; esac
case "$BLANKING" in on|off) ;; *) BLANKING=off ;; esac

fetch() {
  if [ -n "$PIN" ]; then
    have curl || die "curl is needed to check the server's key: apt-get install curl"
    # -k: the pin, not a certificate authority, says who the server is.
    curl -fsS --retry 3 --proto '=https' -k --pinnedpubkey "$PIN" "$1"
  elif have curl; then curl -fsSL --retry 3 "$1"
  elif have wget; then wget -qO- "$1"
  else die "neither curl nor wget is installed"
  fi
}
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# A Chromium that is only Ubuntu's snap (a wrapper or link into /snap) cannot be the kiosk:
# snaps refuse a home outside /home, and snap-confine needs the privileges the unit takes away.
browser_kind() {
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    f="$ROOT/usr/bin/$b"
    [ -e "$f" ] || [ -L "$f" ] || continue
    if [ -L "$f" ]; then case "$(readlink "$f")" in /snap/*) continue ;; esac; fi
    if grep -q '/snap/bin/' "$f" 2>/dev/null; then continue; fi
    echo deb
    return 0
  done
  if [ -e "$ROOT/snap/bin/chromium" ] || grep -qs '/snap/bin/' "$ROOT/usr/bin/chromium-browser"; then echo snap; else echo none; fi
}
SNAP_ONLY="this system's Chromium is Ubuntu's snap, which cannot run as the kiosk (snaps refuse a home outside /home and need privileges the player's sandbox removes). Install a Chromium or Google Chrome .deb (google-chrome-stable, x86_64) and run this again, or use Debian or Raspberry Pi OS"

# A desktop session (Raspberry Pi OS Desktop: lightdm with labwc) keeps the screen: the player
# can only show when it is off.
DM_LINK="$ROOT/etc/systemd/system/display-manager.service"
if [ -L "$DM_LINK" ] || [ -e "$DM_LINK" ]; then
  dm_target=$(readlink "$DM_LINK" 2>/dev/null || echo "$DM_LINK")
  dm=$(basename "$dm_target")
  if [ "$REPLACE_DESKTOP" != 1 ]; then
    die "this box starts a desktop ($dm), which keeps the screen: the player cannot show. Run again with --replace-desktop to turn the desktop off for the player (--uninstall turns it back on), or use Raspberry Pi OS Lite"
  fi
fi

# 1. Chromium and the kiosk compositor, from the distribution.
if [ -z "$ROOT" ]; then
  have apt-get || die "this installer needs apt (Debian, Raspberry Pi OS)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || say "warning: apt-get update failed; trying with the lists there are"
  browser_pkg=""
  if [ "$(browser_kind)" != deb ]; then
    if apt-cache show chromium >/dev/null 2>&1; then browser_pkg=chromium
    elif apt-cache show chromium-browser >/dev/null 2>&1 && ! apt-cache show chromium-browser 2>/dev/null | grep -qi snap; then browser_pkg=chromium-browser
    else die "$SNAP_ONLY"
    fi
  fi
  extra=""
  if [ "$ROTATE" != 0 ]; then extra="wlr-randr"; fi
  say "installing ${'$'}{browser_pkg:+$browser_pkg and }cage"
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $browser_pkg cage fonts-dejavu-core ca-certificates curl dbus-user-session $extra >/dev/null ||
    die "could not install ${'$'}{browser_pkg:+$browser_pkg and }cage"
fi
[ "$(browser_kind)" != snap ] || die "$SNAP_ONLY"

# 2. The unit, from the server only, and only if it is exactly the one this installer was made with.
mkdir -p "$ROOT/etc/placard-player" "$ROOT/usr/local/bin" "$ROOT/etc/systemd/system"
unit_tmp="$ROOT$UNIT.download"
rm -f "$unit_tmp"
if ! fetch "$SERVER_URL/install/player.service" >"$unit_tmp"; then
  rm -f "$unit_tmp"
  die "could not download $SERVER_URL/install/player.service${'$'}{PIN:+ (with the key of the server pinned: a wrong --pin, or not this server)}"
fi
got=$(sha256_of "$unit_tmp")
if [ "$got" != "$UNIT_SHA256" ]; then
  rm -f "$unit_tmp"
  die "the unit from $SERVER_URL is not the one this installer was made for (sha256 $got, expected $UNIT_SHA256); nothing was installed. For another server, run that server's own installer"
fi

# 3. The kiosk user.
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
chmod 0700 "$ROOT/var/lib/placard-player"
if [ -z "$ROOT" ]; then chown "$PLAYER_USER:$PLAYER_USER" "$ROOT/var/lib/placard-player"; fi

# 4. Which server, the settings, and the launcher.
pins=""
if [ -n "$PIN" ]; then pins=$(printf '%s\n' "$PIN" | sed 's#sha256//##g; s#;#,#g'); fi
cat >"$ENV_FILE.tmp" <<EOF
# Written by the Placard installer. Run it again to change the server or a setting.
PLACARD_SERVER_URL=$SERVER_URL
PLACARD_PLAYER_URL=$PLAYER_URL
PLACARD_ORIGIN=$ORIGIN
# The server's pinned keys (base64 SHA-256 of each public key); Chromium accepts no other.
PLACARD_PINS=$pins
PLACARD_ROTATE=$ROTATE
PLACARD_SCREEN_BLANKING=$BLANKING
EOF
mv "$ENV_FILE.tmp" "$ENV_FILE"
cat >"$ROOT/usr/local/bin/placard-player.tmp" <<'EOF'
#!/bin/sh
# Placard player launcher: Chromium in kiosk mode inside the cage compositor, with the
# settings of /etc/placard-player/player.env. The page reports playerFamily desktop-linux,
# and the version the updater installed (/etc/placard-player/version) as its playerVersion.
set -eu
# A release the updater installed may bring its own launcher: it runs instead of this one.
release_launcher=/opt/placard-player/current/bin/placard-player
if [ -z "${'$'}{PLACARD_RELEASE_LAUNCHER:-}" ] && [ "${'$'}{1:-}" != --in-cage ] && [ -x "$release_launcher" ]; then
  PLACARD_RELEASE_LAUNCHER=1 exec "$release_launcher" "$@"
fi
: "${'$'}{PLACARD_PLAYER_URL:?set in /etc/placard-player/player.env}"
: "${'$'}{PLACARD_ORIGIN:?set in /etc/placard-player/player.env}"
# The unit's RuntimeDirectory holds the Wayland socket (/run/user is hidden from the sandbox).
if [ -n "${'$'}{RUNTIME_DIRECTORY:-}" ]; then XDG_RUNTIME_DIR=$RUNTIME_DIRECTORY; export XDG_RUNTIME_DIR; fi
rotate=${'$'}{PLACARD_ROTATE:-0}

if [ "${'$'}{1:-}" = --in-cage ]; then
  # Inside cage: turn every output (cage 0.1.5 and later take wlr-randr), then the browser.
  shift
  if [ "$rotate" != 0 ] && [ "${'$'}{PLACARD_ROTATE_BY:-}" = wlr-randr ]; then
    if command -v wlr-randr >/dev/null 2>&1; then
      for output in $(wlr-randr 2>/dev/null | awk '/^[^ \t]/ { print $1 }'); do
        wlr-randr --output "$output" --transform "$rotate" || echo "placard-player: could not turn $output" >&2
      done
    else
      echo "placard-player: wlr-randr is not installed: the picture is not turned (run the installer with --rotate again)" >&2
    fi
  fi
  exec "$@"
fi

browser=""
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
[ -n "$browser" ] || { echo "placard-player: Chromium is not installed" >&2; exit 1; }
profile="${'$'}{HOME:-/var/lib/placard-player}/chromium"
mkdir -p "$profile"
# A crash must not leave a "restore pages?" bubble over the screen.
sed -i 's/"exit_type":"Crashed"/"exit_type":"Normal"/' "$profile/Default/Preferences" 2>/dev/null || true

set -- "$browser" --kiosk --noerrdialogs --disable-infobars --no-first-run --disable-session-crashed-bubble \
  --disable-features=Translate,InfiniteSessionRestore --autoplay-policy=no-user-gesture-required \
  --check-for-update-interval=31536000 --password-store=basic --ozone-platform=wayland \
  --user-data-dir="$profile"
# HTTPS: the server's own certificate is accepted only for the pinned keys (Chromium honours
# this list only with --user-data-dir). Plain http on the LAN: treated as a secure origin so
# the service worker, Cache Storage and Web Crypto work.
if [ -n "${'$'}{PLACARD_PINS:-}" ]; then set -- "$@" --ignore-certificate-errors-spki-list="$PLACARD_PINS"; fi
case "$PLACARD_ORIGIN" in http://*) set -- "$@" --unsafely-treat-insecure-origin-as-secure="$PLACARD_ORIGIN" ;; esac
# The desktop-linux release installed (placard-player-update), for the page to report.
version=$(cat "${'$'}{PLACARD_VERSION_FILE:-/etc/placard-player/version}" 2>/dev/null || true)
case "$version" in
  ''|*[!A-Za-z0-9.+-]*) set -- "$@" "$PLACARD_PLAYER_URL" ;;
  *) set -- "$@" "$PLACARD_PLAYER_URL&playerVersion=$version" ;;
esac

# No blanking, no power-down of the console between browser restarts (the player's display
# commands and schedules decide when the screen is dark).
if [ "${'$'}{PLACARD_SCREEN_BLANKING:-off}" = off ] && command -v setterm >/dev/null 2>&1; then
  setterm --term linux --blank 0 --powersave off --powerdown 0 >&0 2>/dev/null || true
fi

# Rotation: cage up to 0.1.4 turns the output itself (-r, 90 degrees each); later ones take wlr-randr.
cage_rotate=""
if [ "$rotate" != 0 ]; then
  if cage -h 2>&1 | grep -qE '^[[:space:]]*-r[[:space:]]'; then
    n=$((rotate / 90))
    while [ "$n" -gt 0 ]; do cage_rotate="$cage_rotate -r"; n=$((n - 1)); done
  else
    PLACARD_ROTATE_BY=wlr-randr
    export PLACARD_ROTATE_BY
  fi
fi
# shellcheck disable=SC2086
exec cage -s $cage_rotate -- "$0" --in-cage "$@"
EOF
chmod 0755 "$ROOT/usr/local/bin/placard-player.tmp"
mv "$ROOT/usr/local/bin/placard-player.tmp" "$ROOT/usr/local/bin/placard-player"

# The updater: desktop-linux releases offered to this screen (docs/player-updates.md).
cat >"$ROOT/usr/local/bin/placard-player-update.tmp" <<'PLACARD_UPDATER_EOF'
${PLAYER_UPDATER}PLACARD_UPDATER_EOF
chmod 0755 "$ROOT/usr/local/bin/placard-player-update.tmp"
mv "$ROOT/usr/local/bin/placard-player-update.tmp" "$ROOT/usr/local/bin/placard-player-update"
cat >"$ROOT/etc/systemd/system/placard-player-update.service" <<'PLACARD_UPDATER_EOF'
${UPDATER_SERVICE}PLACARD_UPDATER_EOF
cat >"$ROOT/etc/systemd/system/placard-player-update.timer" <<'PLACARD_UPDATER_EOF'
${UPDATER_TIMER}PLACARD_UPDATER_EOF
chmod 0644 "$ROOT/etc/systemd/system/placard-player-update.service" "$ROOT/etc/systemd/system/placard-player-update.timer"
mkdir -p "$ROOT/etc/systemd/system/timers.target.wants"
ln -sfn /etc/systemd/system/placard-player-update.timer "$ROOT/etc/systemd/system/timers.target.wants/placard-player-update.timer"
# The updater's own settings: kept across runs; root's only (it may hold the credential).
if [ ! -f "$ROOT/etc/placard-player/updater.env" ]; then
  cat >"$ROOT/etc/placard-player/updater.env" <<'PLACARD_UPDATER_EOF'
# The Placard player updater's settings (placard-player-update). Kept by the installer.
# The screen's device credential; empty: the one the kiosk's page keeps in its Chromium profile.
PLACARD_DEVICE_CREDENTIAL=
PLACARD_UPDATER_EOF
fi
chmod 0600 "$ROOT/etc/placard-player/updater.env"

mv "$unit_tmp" "$ROOT$UNIT"
chmod 0644 "$ROOT$UNIT"
mkdir -p "$ROOT/etc/systemd/system/graphical.target.wants"
ln -sfn "$UNIT" "$ROOT/etc/systemd/system/graphical.target.wants/placard-player.service"

# 5. The desktop, when asked to, goes out of the way (remembered for --uninstall).
if [ -L "$DM_LINK" ] || [ -e "$DM_LINK" ]; then
  printf '%s\n' "$dm_target" >"$DESKTOP_FILE"
  if [ -n "$ROOT" ]; then rm -f "$DM_LINK"
  else systemctl disable "$dm" >/dev/null 2>&1 || die "could not turn the desktop ($dm) off"; fi
  say "turned the desktop ($dm) off; --uninstall turns it back on"
fi

# 6. Start.
if [ "$START" = 1 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl disable getty@tty1.service >/dev/null 2>&1 || true
  systemctl set-default graphical.target >/dev/null 2>&1 || true
  systemctl enable placard-player.service >/dev/null 2>&1
  systemctl enable --now placard-player-update.timer >/dev/null 2>&1 || say "warning: could not start placard-player-update.timer"
  if [ -n "$(cat "$DESKTOP_FILE" 2>/dev/null)" ]; then systemctl stop "$(basename "$(cat "$DESKTOP_FILE")")" >/dev/null 2>&1 || true; fi
  systemctl restart placard-player.service
  say "started: this screen now shows a pairing code from $SERVER_URL"
else
  say "installed; start it with: systemctl enable --now placard-player"
fi
say "player page: $PLAYER_URL${'$'}{PIN:+ (server key pinned)}"
`;

export function playerInstallScript(target: ScriptTarget): string {
  return render(INSTALL_SCRIPT, target, { UNIT_SHA256: PLAYER_SERVICE_SHA256 });
}

/** The unit: the same bytes for every server (PLAYER_SERVICE_SHA256). */
export function playerServiceUnit(): string {
  return PLAYER_SERVICE;
}
