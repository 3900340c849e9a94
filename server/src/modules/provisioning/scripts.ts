/**
 * What the installers share (player-script.ts, mirroring-script.ts): they are rendered with
 * this server's URL and the pin of its HTTPS key (docs/trust.md). Placeholders `@@NAME@@` are replaced with values
 * checked by `safeServerUrl` and `safePin`, so nothing from a request can break out of the
 * shell's single quotes.
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

/** curl's --pinnedpubkey value: one or more `sha256//<base64 of 32 bytes>` joined by ';' (safe inside single quotes). */
export function safePin(pin: string): boolean {
  return /^sha256\/\/[A-Za-z0-9+/]{43}=(;sha256\/\/[A-Za-z0-9+/]{43}=)*$/.test(pin);
}

/** The pins as Chromium's --ignore-certificate-errors-spki-list wants them: base64, comma-separated. */
export function spkiList(pin: string): string {
  return pin
    .split(';')
    .map((p) => p.replace(/^sha256\/\//, ''))
    .join(',');
}

/**
 * The player's unit. It names no server (that is in /etc/placard-player/player.env), so its
 * sha256 is the same for every server of this version: the installer carries it and refuses
 * any other unit. Hardened as far as a kiosk allows (docs/trust.md has the measurements):
 * what is left out is what cage and Chromium need.
 */

/** What a script is rendered with: the URL screens use, and the pin of its HTTPS key (null: CA trust or plain http). */
export interface ScriptTarget {
  serverUrl: string;
  pin: string | null;
}

/** The one line an admin runs on a screen box (the console shows it). */
export function installCommand(target: ScriptTarget, script = 'install.sh'): string {
  if (!target.pin) return `curl -fsSL ${target.serverUrl}/${script} | sudo sh`;
  return `curl -fsS --pinnedpubkey '${target.pin}' -k ${target.serverUrl}/${script} | sudo sh -s -- --pin '${target.pin}'`;
}

export function render(template: string, target: ScriptTarget, extra: Record<string, string> = {}, script = 'install.sh'): string {
  if (target.pin !== null && !safePin(target.pin)) throw new Error('not a pin');
  if (safeServerUrl(target.serverUrl) !== target.serverUrl) throw new Error('not a safe server URL');
  // ${"$"} in the templates above writes a literal "$" before "{" without a JS interpolation.
  let out = template
    .replaceAll('@@COMMAND@@', installCommand(target, script))
    .replaceAll('@@SERVER_URL@@', target.serverUrl)
    .replaceAll('@@PIN@@', target.pin ?? '');
  for (const [k, v] of Object.entries(extra)) out = out.replaceAll(`@@${k}@@`, v);
  return out;
}

/** The CPU a receiver binary is built for, from its ELF header (null: not an ELF file, or another CPU). */
export function elfArchitecture(head: Buffer): 'x86_64' | 'aarch64' | null {
  if (head.length < 20 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return null; // 64-bit little-endian ELF
  const machine = head.readUInt16LE(18);
  return machine === 0x3e ? 'x86_64' : machine === 0xb7 ? 'aarch64' : null;
}
