import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { TestApp } from './harness.js';

/** A PNG of one flat colour with a white bar (so thumbnails are recognisable), written to dir. */
export async function samplePng(dir: string, name = 'red.png', rgb = { r: 220, g: 30, b: 40 }, width = 640, height = 360): Promise<string> {
  const bar = await sharp({ create: { width: Math.round(width / 2), height: Math.round(height / 8), channels: 3, background: { r: 255, g: 255, b: 255 } } })
    .png()
    .toBuffer();
  const file = path.join(dir, name);
  await sharp({ create: { width, height, channels: 3, background: rgb } })
    .composite([{ input: bar, top: Math.round(height / 2), left: Math.round(width / 4) }])
    .png()
    .toFile(file);
  return file;
}

/** A short H.264 test-pattern MP4 made by the server's own ffmpeg. */
export function sampleMp4(app: TestApp, dir: string, name = 'clip.mp4', seconds = 2): string {
  const file = path.join(dir, name);
  execFileSync(app.deps.tools.ffmpeg!.path, [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=320x180:rate=15:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    file,
  ]);
  return file;
}

/** Bytes no sniffer recognises. */
export function sampleJunk(dir: string, name: string, bytes: number): string {
  const file = path.join(dir, name);
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) buf.writeUInt32LE((i * 2654435761) >>> 0, i);
  writeFileSync(file, buf);
  return file;
}
