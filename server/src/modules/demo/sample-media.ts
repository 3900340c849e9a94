import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../../platform/app-deps.js';
import { renderSlide, renderTestClip, type SlideSpec } from '../../platform/media/slides.js';

/**
 * The demo's sample media, generated locally (never downloaded) once into
 * `<data>/demo-source/` and reused by every reset, so a reset only copies files.
 */
export interface DemoSource {
  /** Stable key the seed refers to. */
  key: 'welcome' | 'specials' | 'hours' | 'clip';
  /** The asset's name in the library. */
  name: string;
  file: string;
  slide?: SlideSpec;
  clip?: { width: number; height: number; seconds: number };
}

export const DEMO_SOURCE_DIR = 'demo-source';

export function demoSources(dataDir: string): DemoSource[] {
  const dir = path.join(dataDir, DEMO_SOURCE_DIR);
  return [
    {
      key: 'welcome',
      name: 'Welcome to Placard',
      file: path.join(dir, 'welcome.jpg'),
      slide: {
        width: 1920,
        height: 1080,
        from: '#1d4ed8',
        to: '#7c3aed',
        title: 'Welcome to Placard',
        lines: ['Demo Café — sample content', 'Reset it any time from the console'],
      },
    },
    {
      key: 'specials',
      name: "Today's specials",
      file: path.join(dir, 'specials.jpg'),
      slide: {
        width: 1920,
        height: 1080,
        from: '#b45309',
        to: '#be123c',
        title: "Today's specials",
        lines: ['Soup of the day  £4.50', 'Toasted sandwich  £6.00', 'Flat white  £3.20'],
      },
    },
    {
      key: 'hours',
      name: 'Opening hours',
      file: path.join(dir, 'hours.jpg'),
      slide: {
        width: 1080,
        height: 1920,
        from: '#047857',
        to: '#0e7490',
        title: 'Opening hours',
        lines: ['Mon–Fri  7:30–18:00', 'Saturday  9:00–17:00', 'Sunday  10:00–16:00'],
      },
    },
    {
      key: 'clip',
      name: 'Test pattern clip',
      file: path.join(dir, 'clip.mp4'),
      clip: { width: 1280, height: 720, seconds: 8 },
    },
  ];
}

/**
 * Makes the sources that are missing (sharp for slides, ffmpeg for the clip); each is
 * written under a temporary name and renamed, so a crash never leaves half a file to reuse.
 * Never call inside a database transaction.
 */
export async function ensureDemoSources(deps: Pick<AppDeps, 'config' | 'tools'>, signal?: AbortSignal): Promise<DemoSource[]> {
  const sources = demoSources(deps.config.dataDir);
  await fs.mkdir(path.dirname(sources[0]!.file), { recursive: true });
  for (const source of sources) {
    if (existsSync(source.file)) continue;
    signal?.throwIfAborted();
    const tmp = `${source.file}.${process.pid}.tmp${path.extname(source.file)}`;
    try {
      if (source.slide) await renderSlide(tmp, source.slide);
      else await renderTestClip(deps.tools, tmp, source.clip!, signal);
      await fs.rename(tmp, source.file);
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }
  return sources;
}
