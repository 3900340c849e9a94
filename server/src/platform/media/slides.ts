import { loadSharp } from './sharp.js';
import { run } from './av.js';
import type { MediaTools } from './tools.js';

/**
 * Generated sample media (demo mode): title slides made with sharp and a test-pattern
 * clip made with ffmpeg. Kept here because only platform/media touches sharp and ffmpeg.
 */

export interface SlideSpec {
  width: number;
  height: number;
  /** Gradient from the top-left colour to the bottom-right one (#rrggbb). */
  from: string;
  to: string;
  title: string;
  /** Smaller lines under the title. */
  lines?: readonly string[];
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

/** A JPEG slide: a colour gradient with large readable text composited over it (SVG overlay). */
export async function renderSlide(file: string, spec: SlideSpec): Promise<void> {
  const sharp = await loadSharp();
  const { width, height } = spec;
  const gradient = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${spec.from}"/><stop offset="1" stop-color="${spec.to}"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/></svg>`;
  const titleSize = Math.round(Math.min(width, height) * 0.11);
  const lineSize = Math.round(titleSize * 0.45);
  const lines = spec.lines ?? [];
  const blockHeight = titleSize + lines.length * lineSize * 1.5;
  let y = Math.round((height - blockHeight) / 2 + titleSize * 0.8);
  const texts = [`<text x="50%" y="${y}" font-size="${titleSize}" font-weight="bold">${escapeXml(spec.title)}</text>`];
  y += Math.round(titleSize * 0.4);
  for (const line of lines) {
    y += Math.round(lineSize * 1.5);
    texts.push(`<text x="50%" y="${y}" font-size="${lineSize}">${escapeXml(line)}</text>`);
  }
  const overlay = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <g font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" fill="#ffffff" text-anchor="middle" stroke="#00000055" stroke-width="2">${texts.join('')}</g></svg>`;
  await sharp(Buffer.from(gradient))
    .composite([{ input: Buffer.from(overlay), top: 0, left: 0 }])
    .jpeg({ quality: 88, mozjpeg: true })
    .toFile(file);
}

/** An H.264/AAC MP4 (yuv420p, moov first) of ffmpeg's test pattern with a tone: plays in browsers as is. */
export async function renderTestClip(
  tools: MediaTools,
  file: string,
  options: { width: number; height: number; seconds: number },
  signal?: AbortSignal,
): Promise<void> {
  if (!tools.ffmpeg) throw new Error('ffmpeg is not available: the sample video cannot be made');
  const { width, height, seconds } = options;
  await run(
    tools.ffmpeg.path,
    [
      '-hide_banner',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=${width}x${height}:rate=25:duration=${seconds}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:beep_factor=4:duration=${seconds}`,
      '-map',
      '0:v:0',
      '-map',
      '1:a:0',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '26',
      '-pix_fmt',
      'yuv420p',
      '-threads',
      '2',
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-ac',
      '2',
      '-shortest',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      file,
    ],
    { nice: true, timeoutMs: 300_000, signal },
  );
}
