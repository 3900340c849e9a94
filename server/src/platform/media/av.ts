import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadSharp } from './sharp.js';
import { renderStill, THUMBNAIL_SIZE, type RenderedFile } from './image.js';
import type { MediaTools } from './tools.js';

/** The file cannot be processed however often we retry (no stream, corrupt, ...). */
export class MediaRejected extends Error {}

export interface AvResult {
  files: RenderedFile[];
  originalAs?: { purpose: 'player'; contentType: string; width: number | null; height: number | null }[];
  width: number | null;
  height: number | null;
  durationMs: number | null;
  pageCount: number | null;
  metadata: Record<string, unknown>;
}

const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => existsSync(p)) ?? null;

interface RunOptions {
  signal?: AbortSignal;
  onLine?: (line: string) => void;
  /** Lower CPU priority (ffmpeg transcodes must not starve heartbeats). */
  nice?: boolean;
  timeoutMs?: number;
}

/** The command line that runs `binary`: through `nice -n 10` when asked (and nice exists). */
export function commandLine(binary: string, args: readonly string[], nice = false): [string, string[]] {
  return nice && NICE ? [NICE, ['-n', '10', binary, ...args]] : [binary, [...args]];
}

/** Runs a tool without a shell; rejects with the end of its stderr. */
export function run(binary: string, args: string[], options: RunOptions = {}): Promise<string> {
  const [cmd, argv] = commandLine(binary, args, options.nice);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal, timeout: options.timeoutMs ?? 6 * 3_600_000 });
    let out = '';
    let err = '';
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      if (out.length < 4 * 1024 * 1024) out += d;
      if (options.onLine) {
        partial += d;
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) options.onLine(l);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      err = (err + d).slice(-4000);
    });
    child.on('error', (e) => reject(e));
    // A broken pipe reaches 'close' too; its error event must not go unheard.
    child.stdout.on('error', (e) => reject(e));
    child.stderr.on('error', (e) => reject(e));
    child.on('close', (code, sig) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${path.basename(binary)} failed (${sig ?? `exit ${code}`}): ${err.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  profile?: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  duration?: string;
  avg_frame_rate?: string;
  tags?: Record<string, string>;
  side_data_list?: { side_data_type?: string; rotation?: number }[];
  disposition?: { attached_pic?: number };
}
interface Probe {
  streams?: ProbeStream[];
  format?: { format_name?: string; duration?: string; bit_rate?: string };
}

export async function ffprobe(tools: MediaTools, file: string): Promise<Probe> {
  if (!tools.ffprobe) throw new MediaRejected('ffprobe is not available (set PLACARD_FFPROBE or install ffmpeg)');
  let out: string;
  try {
    out = await run(tools.ffprobe.path, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], { timeoutMs: 60_000 });
  } catch (err) {
    throw new MediaRejected(`not a readable media file: ${(err as Error).message}`);
  }
  return JSON.parse(out) as Probe;
}

/** A moving-picture stream (not a cover picture or a still attached to audio). */
function isMotionVideo(s: ProbeStream): boolean {
  return s.codec_type === 'video' && s.disposition?.attached_pic !== 1 && s.codec_name !== 'mjpeg' && s.codec_name !== 'png';
}

/** What to call a container's type once ffprobe has said whether it holds video. */
const AS_AUDIO: Record<string, string> = {
  'video/mp4': 'audio/mp4',
  'video/x-m4v': 'audio/mp4',
  'video/quicktime': 'audio/mp4',
  'video/webm': 'audio/webm',
  'video/x-matroska': 'audio/x-matroska',
};
const AS_VIDEO: Record<string, string> = {
  'audio/mp4': 'video/mp4',
  'audio/x-m4a': 'video/mp4',
  'audio/ogg': 'video/ogg',
  'audio/webm': 'video/webm',
};

/**
 * Video or audio, decided by the streams ffprobe finds rather than by the container (an
 * MP4 or WebM may hold only sound; an .m4a may hold a picture track): a moving-picture
 * stream makes it video, else an audio stream makes it audio. Answers the kind and the
 * content type to record, or null when ffprobe cannot read the file (processing then
 * fails with the reason).
 */
export async function avKindOf(tools: MediaTools, file: string, contentType: string): Promise<{ kind: 'video' | 'audio'; contentType: string } | null> {
  let probe: Probe;
  try {
    probe = await ffprobe(tools, file);
  } catch {
    return null;
  }
  const streams = probe.streams ?? [];
  if (streams.some(isMotionVideo))
    return { kind: 'video', contentType: contentType.startsWith('audio/') ? (AS_VIDEO[contentType] ?? contentType) : contentType };
  if (streams.some((s) => s.codec_type === 'audio'))
    return { kind: 'audio', contentType: contentType.startsWith('video/') ? (AS_AUDIO[contentType] ?? contentType) : contentType };
  return null;
}

function rotationOf(s: ProbeStream): number {
  const side = s.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const tag = s.tags?.rotate ? Number(s.tags.rotate) : 0;
  const r = side ?? tag ?? 0;
  return ((Math.round(r) % 360) + 360) % 360;
}

/** True when the top-level `moov` box comes before `mdat` (playback starts before the download ends). */
export async function isFaststart(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    let pos = 0;
    const header = Buffer.alloc(16);
    for (let i = 0; i < 64 && pos + 8 <= size; i++) {
      await handle.read(header, 0, 16, pos);
      let boxSize = header.readUInt32BE(0);
      const type = header.toString('latin1', 4, 8);
      if (type === 'moov') return true;
      if (type === 'mdat') return false;
      if (boxSize === 1) boxSize = Number(header.readBigUInt64BE(8));
      else if (boxSize === 0) return false;
      if (boxSize < 8) return false;
      pos += boxSize;
    }
    return false;
  } finally {
    await handle.close();
  }
}

function progressReader(durationMs: number, report: (f: number) => void) {
  return (line: string) => {
    const m = /^out_time_(?:us|ms)=(\d+)/.exec(line);
    if (m && durationMs > 0) report(Math.min(0.99, Number(m[1]) / 1000 / durationMs));
  };
}

/**
 * Video: ffprobe (duration, codecs, dimensions, rotation), a poster frame and thumbnail,
 * and a player variant: the original when a browser plays it as is (H.264/AAC MP4,
 * yuv420p, moov first), a faststart remux when only the layout is wrong, else an
 * H.264/AAC transcode (niced, progress reported).
 */
export async function processVideo(
  tools: MediaTools,
  source: string,
  work: string,
  maxPixels: number,
  progress: (f: number) => Promise<void>,
  signal: AbortSignal,
): Promise<AvResult> {
  if (!tools.ffmpeg) throw new MediaRejected('video needs ffmpeg, which this server does not have (set PLACARD_FFMPEG or install ffmpeg)');
  const probe = await ffprobe(tools, source);
  const v = probe.streams?.find(isMotionVideo);
  const a = probe.streams?.find((s) => s.codec_type === 'audio');
  if (!v?.width || !v.height) throw new MediaRejected('the file has no video stream');
  const rotation = rotationOf(v);
  const swap = rotation === 90 || rotation === 270;
  const width = swap ? v.height : v.width;
  const height = swap ? v.width : v.height;
  if (width * height > maxPixels) throw new MediaRejected(`the video is ${width}x${height}, more pixels than allowed`);
  const durationMs = Math.round(Number(probe.format?.duration ?? v.duration ?? 0) * 1000) || null;
  await progress(0.05);

  const frame = path.join(work, 'frame.jpg');
  const at = durationMs ? Math.min(1, durationMs / 10_000) : 0;
  await run(tools.ffmpeg.path, ['-hide_banner', '-v', 'error', '-ss', String(at), '-i', source, '-frames:v', '1', '-q:v', '2', '-y', frame], {
    signal,
    nice: true,
    timeoutMs: 120_000,
  });
  const files = await renderStill(frame, work, maxPixels, true);
  await fs.rm(frame, { force: true });
  await progress(0.1);

  const mp4 = /mp4|mov/.test(probe.format?.format_name ?? '');
  const codecsOk = v.codec_name === 'h264' && (v.pix_fmt === 'yuv420p' || v.pix_fmt === 'yuvj420p') && (!a || a.codec_name === 'aac');
  const metadata = {
    container: probe.format?.format_name ?? null,
    videoCodec: v.codec_name ?? null,
    audioCodec: a?.codec_name ?? null,
    pixelFormat: v.pix_fmt ?? null,
    rotation,
    frameRate: v.avg_frame_rate ?? null,
    transcoded: false,
  };
  let originalAs: AvResult['originalAs'];
  if (mp4 && codecsOk && (await isFaststart(source))) {
    originalAs = [{ purpose: 'player', contentType: 'video/mp4', width, height }];
  } else {
    const out = path.join(work, 'player.mp4');
    const common = ['-hide_banner', '-v', 'error', '-nostats', '-progress', 'pipe:1', '-y', '-i', source];
    const report = progressReader(durationMs ?? 0, (f) => void progress(0.1 + f * 0.9).catch(() => {}));
    if (mp4 && codecsOk) {
      await run(tools.ffmpeg.path, [...common, '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', '-movflags', '+faststart', out], {
        signal,
        nice: true,
        onLine: report,
      });
    } else {
      metadata.transcoded = true;
      await run(
        tools.ffmpeg.path,
        [
          ...common,
          '-map',
          '0:v:0',
          '-map',
          '0:a:0?',
          '-c:v',
          'libx264',
          '-preset',
          'veryfast',
          '-crf',
          '22',
          '-profile:v',
          'high',
          '-pix_fmt',
          'yuv420p',
          '-vf',
          "scale='min(3840,trunc(iw/2)*2)':-2",
          '-c:a',
          'aac',
          '-b:a',
          '160k',
          '-ac',
          '2',
          '-movflags',
          '+faststart',
          '-threads',
          '2',
          out,
        ],
        { signal, nice: true, onLine: report },
      );
    }
    const outProbe = await ffprobe(tools, out);
    const ov = outProbe.streams?.find((s) => s.codec_type === 'video');
    const ow = ov?.width ?? width;
    const oh = ov?.height ?? height;
    const r = ov ? rotationOf(ov) : 0;
    const oswap = r === 90 || r === 270;
    files.push({ file: out, purpose: 'player', contentType: 'video/mp4', width: oswap ? oh : ow, height: oswap ? ow : oh });
  }
  return { files, originalAs, width, height, durationMs, pageCount: null, metadata };
}

const BROWSER_AUDIO = new Set(['audio/mpeg', 'audio/mp4', 'audio/aac']);

/** Audio: duration and codecs; the original plays as is when a browser plays it, else an AAC transcode. */
export async function processAudio(
  tools: MediaTools,
  source: string,
  contentType: string,
  work: string,
  progress: (f: number) => Promise<void>,
  signal: AbortSignal,
): Promise<AvResult> {
  if (!tools.ffmpeg) throw new MediaRejected('audio needs ffmpeg, which this server does not have (set PLACARD_FFMPEG or install ffmpeg)');
  const probe = await ffprobe(tools, source);
  const a = probe.streams?.find((s) => s.codec_type === 'audio');
  if (!a) throw new MediaRejected('the file has no audio stream');
  const durationMs = Math.round(Number(probe.format?.duration ?? a.duration ?? 0) * 1000) || null;
  const metadata = { container: probe.format?.format_name ?? null, audioCodec: a.codec_name ?? null, transcoded: false };
  const playable = BROWSER_AUDIO.has(contentType) && (a.codec_name === 'mp3' || a.codec_name === 'aac');
  if (playable)
    return {
      files: [],
      originalAs: [{ purpose: 'player', contentType: contentType === 'audio/aac' ? 'audio/aac' : contentType, width: null, height: null }],
      width: null,
      height: null,
      durationMs,
      pageCount: null,
      metadata,
    };
  metadata.transcoded = true;
  const out = path.join(work, 'player.m4a');
  const report = progressReader(durationMs ?? 0, (f) => void progress(f).catch(() => {}));
  await run(
    tools.ffmpeg.path,
    [
      '-hide_banner',
      '-v',
      'error',
      '-nostats',
      '-progress',
      'pipe:1',
      '-y',
      '-i',
      source,
      '-vn',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-movflags',
      '+faststart',
      out,
    ],
    { signal, nice: true, onLine: report },
  );
  return {
    files: [{ file: out, purpose: 'player', contentType: 'audio/mp4', width: null, height: null }],
    width: null,
    height: null,
    durationMs,
    pageCount: null,
    metadata,
  };
}

export const PDF_MAX_PAGES = 100;

/** PDF: pages rendered (poppler's pdftoppm) to WebP player images 1920 px on the long side, a thumbnail of page 1. */
export async function processPdf(
  tools: MediaTools,
  source: string,
  work: string,
  maxPixels: number,
  progress: (f: number) => Promise<void>,
  signal: AbortSignal,
): Promise<AvResult> {
  const sharp = await loadSharp();
  const support = await tools.pdf();
  if (!support.available || !tools.pdftoppm || !tools.pdfinfo) throw new MediaRejected(support.detail);
  let pages: number;
  try {
    const info = await run(tools.pdfinfo, [source], { signal, timeoutMs: 60_000 });
    pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0);
  } catch (err) {
    throw new MediaRejected(`not a readable PDF: ${(err as Error).message}`);
  }
  if (!pages) throw new MediaRejected('the PDF has no pages');
  const last = Math.min(pages, PDF_MAX_PAGES);
  const files: RenderedFile[] = [];
  let width: number | null = null;
  let height: number | null = null;
  for (let page = 1; page <= last; page++) {
    const prefix = path.join(work, `page-${page}`);
    await run(tools.pdftoppm, ['-f', String(page), '-l', String(page), '-scale-to', '1920', '-png', '-singlefile', source, prefix], {
      signal,
      nice: true,
      timeoutMs: 120_000,
    });
    const png = `${prefix}.png`;
    const webp = path.join(work, `page-${page}.webp`);
    const r = await sharp(png, { limitInputPixels: maxPixels }).webp({ quality: 85 }).toFile(webp);
    files.push({ file: webp, purpose: 'player', contentType: 'image/webp', width: r.width, height: r.height, page });
    if (page === 1) {
      width = r.width;
      height = r.height;
      files.push(...(await renderStill(png, work, maxPixels, false)));
    }
    await fs.rm(png, { force: true });
    await progress(page / last);
  }
  return { files, width, height, durationMs: null, pageCount: pages, metadata: { pagesRendered: last, thumbnailSize: THUMBNAIL_SIZE } };
}
