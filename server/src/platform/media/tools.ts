import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export type ToolSource = 'env' | 'ffmpeg-static' | 'npm-installer' | 'path';
export interface ResolvedTool {
  path: string;
  source: ToolSource;
}

function fromPackage(load: () => string | null | undefined): string | null {
  try {
    const p = load();
    return p && existsSync(p) ? p : null;
  } catch {
    return null; // package absent, or no binary for this platform
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * Resolves ffmpeg and ffprobe in the order of DESIGN.md section 2: the PLACARD_FFMPEG /
 * PLACARD_FFPROBE setting (used as given, even when wrong, so a bad setting shows in
 * /readyz instead of being silently replaced), ffmpeg-static when its binary was
 * downloaded, the binaries shipped in @ffmpeg-installer / @ffprobe-installer, then PATH.
 */
export function resolveMediaTools(settings: { ffmpegPath: string | null; ffprobePath: string | null }): {
  ffmpeg: ResolvedTool | null;
  ffprobe: ResolvedTool | null;
} {
  const ffmpeg: ResolvedTool | null = settings.ffmpegPath
    ? { path: settings.ffmpegPath, source: 'env' }
    : pick([
        ['ffmpeg-static', () => fromPackage(() => require('ffmpeg-static') as string | null)],
        ['npm-installer', () => fromPackage(() => (require('@ffmpeg-installer/ffmpeg') as { path: string }).path)],
        ['path', () => onPath('ffmpeg')],
      ]);
  const ffprobe: ResolvedTool | null = settings.ffprobePath
    ? { path: settings.ffprobePath, source: 'env' }
    : pick([
        ['npm-installer', () => fromPackage(() => (require('@ffprobe-installer/ffprobe') as { path: string }).path)],
        ['path', () => onPath('ffprobe')],
      ]);
  return { ffmpeg, ffprobe };
}

function pick(candidates: [ToolSource, () => string | null][]): ResolvedTool | null {
  for (const [source, find] of candidates) {
    const p = find();
    if (p) return { path: p, source };
  }
  return null;
}

/** pdftoppm and pdfinfo (poppler-utils): the setting's pdftoppm with pdfinfo beside it, else PATH. */
export function resolvePoppler(pdftoppmPath: string | null | undefined): { pdftoppm: string | null; pdfinfo: string | null } {
  if (pdftoppmPath) return { pdftoppm: pdftoppmPath, pdfinfo: path.join(path.dirname(pdftoppmPath), 'pdfinfo') };
  return { pdftoppm: onPath('pdftoppm'), pdfinfo: onPath('pdfinfo') };
}

/** Runs `<binary> -version`; answers its first line, or throws with why it is unusable. */
function probeBinary(binary: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-hide_banner', '-version'], { timeout: 10_000 }, (err, stdout) => {
      if (err) reject(new Error(err.message.split('\n')[0]));
      else resolve(stdout.split('\n')[0]?.trim() ?? '');
    });
  });
}

export interface ToolCheck {
  ok: boolean;
  detail: string;
}

export interface MediaToolsStatus {
  sharp: ToolCheck;
  ffmpeg: ToolCheck;
  ffprobe: ToolCheck;
}

/**
 * The media tools this server uses, with a health check cached for `ttlMs` (spawning
 * ffmpeg on every /readyz poll would be wasteful). Only platform/media touches them.
 */
export class MediaTools {
  readonly ffmpeg: ResolvedTool | null;
  readonly ffprobe: ResolvedTool | null;
  /** poppler-utils, for PDF assets (optional: PDFs are refused without it). */
  readonly pdftoppm: string | null;
  readonly pdfinfo: string | null;
  private cached: { at: number; status: Promise<MediaToolsStatus>; sharp: Promise<SharpProbe> } | null = null;
  private pdfCached: { at: number; status: Promise<{ available: boolean; detail: string }> } | null = null;

  constructor(
    settings: { ffmpegPath: string | null; ffprobePath: string | null; pdftoppmPath?: string | null },
    private readonly ttlMs = 30_000,
  ) {
    const resolved = resolveMediaTools(settings);
    this.ffmpeg = resolved.ffmpeg;
    this.ffprobe = resolved.ffprobe;
    const poppler = resolvePoppler(settings.pdftoppmPath);
    this.pdftoppm = poppler.pdftoppm;
    this.pdfinfo = poppler.pdfinfo;
  }

  /**
   * Whether PDFs can be processed: pdftoppm and pdfinfo run (cached like `check`). Not a
   * readiness check: a server without poppler-utils works, it only refuses PDFs.
   */
  pdf(): Promise<{ available: boolean; detail: string }> {
    const now = Date.now();
    if (!this.pdfCached || now - this.pdfCached.at > this.ttlMs) {
      this.pdfCached = { at: now, status: this.checkPdf() };
    }
    return this.pdfCached.status;
  }

  private async checkPdf(): Promise<{ available: boolean; detail: string }> {
    const install = 'PDF support needs poppler-utils (pdftoppm, pdfinfo): install it with apt-get install poppler-utils, or set PLACARD_PDFTOPPM';
    if (!this.pdftoppm || !this.pdfinfo) return { available: false, detail: `pdftoppm not found; ${install}` };
    for (const binary of [this.pdftoppm, this.pdfinfo]) {
      const usable = await new Promise<string | null>((resolve) => {
        execFile(binary, ['-v'], { timeout: 10_000 }, (err) => resolve(err ? (err.message.split('\n')[0] ?? 'failed') : null));
      });
      if (usable !== null) return { available: false, detail: `${binary} is not usable (${usable}); ${install}` };
    }
    return { available: true, detail: `poppler-utils (${this.pdftoppm})` };
  }

  /** ffmpeg and ffprobe both run: video and audio can be processed. */
  async av(): Promise<{ available: boolean; detail: string }> {
    const status = await this.check();
    const available = status.ffmpeg.ok && status.ffprobe.ok;
    const detail = available
      ? status.ffmpeg.detail
      : [status.ffmpeg, status.ffprobe]
          .filter((c) => !c.ok)
          .map((c) => c.detail)
          .join('; ');
    return { available, detail };
  }

  check(): Promise<MediaToolsStatus> {
    return this.fresh().status;
  }

  /** sharp's and libvips' versions, as the last check found them (null when sharp does not run). */
  async sharpVersions(): Promise<SharpVersions> {
    return (await this.fresh().sharp).versions;
  }

  private fresh() {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > this.ttlMs) {
      const sharp = probeSharp();
      this.cached = { at: now, sharp, status: this.runChecks(sharp) };
    }
    return this.cached;
  }

  private async runChecks(sharp: Promise<SharpProbe>): Promise<MediaToolsStatus> {
    const binary = async (tool: ResolvedTool | null, name: string): Promise<ToolCheck> => {
      if (!tool) return { ok: false, detail: `${name} not found (set PLACARD_${name.toUpperCase()} or install ${name})` };
      try {
        return { ok: true, detail: `${await probeBinary(tool.path)} (${tool.path}, from ${tool.source})` };
      } catch (err) {
        return { ok: false, detail: `${name} at ${tool.path} is not usable: ${(err as Error).message}` };
      }
    };
    const [ffmpeg, ffprobe, sharpProbe] = await Promise.all([binary(this.ffmpeg, 'ffmpeg'), binary(this.ffprobe, 'ffprobe'), sharp]);
    return { sharp: sharpProbe.check, ffmpeg, ffprobe };
  }
}

export interface SharpVersions {
  sharp: string | null;
  vips: string | null;
}

interface SharpProbe {
  check: ToolCheck;
  versions: SharpVersions;
}

/**
 * Run in a child node: loads this installation's sharp, makes a 2x2 PNG (libvips works), and
 * prints the versions; a failure prints sharp's message and exits 1.
 */
const SHARP_PROBE = `try {
  const { default: sharp } = await import(process.argv[1]);
  await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } }).png().toBuffer();
  process.stdout.write(JSON.stringify({ sharp: sharp.versions.sharp ?? null, vips: sharp.versions.vips ?? null }));
} catch (err) {
  process.stderr.write(String(err?.message ?? err).split('\\n')[0]);
  process.exit(1);
}`;

/**
 * Whether sharp runs, checked in a child node process (~0.15 s of CPU, like the ffmpeg and
 * ffprobe probes beside it) so that neither start-up nor /readyz loads sharp and libvips
 * into the server: they load at the first image (platform/media/sharp.ts).
 */
function probeSharp(): Promise<SharpProbe> {
  return new Promise((resolve) => {
    const script = ['--input-type=module', '-e', SHARP_PROBE, import.meta.resolve('sharp')];
    execFile(process.execPath, script, { timeout: 30_000 }, (err, stdout, stderr) => {
      const versions: SharpVersions = { sharp: null, vips: null };
      if (err) {
        const why = stderr.trim() || err.message.split('\n')[0];
        resolve({ check: { ok: false, detail: `sharp is not usable: ${why}` }, versions });
        return;
      }
      try {
        Object.assign(versions, JSON.parse(stdout) as SharpVersions);
      } catch {
        resolve({ check: { ok: false, detail: `sharp is not usable: its check answered ${JSON.stringify(stdout.slice(0, 200))}` }, versions });
        return;
      }
      resolve({ check: { ok: true, detail: `sharp ${versions.sharp ?? ''} (libvips ${versions.vips})` }, versions });
    });
  });
}
