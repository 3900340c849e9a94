import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadSharp } from '../../platform/media/sharp.js';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { nowIso } from '../../platform/db/ids.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { normalizePreviewImage } from '../../platform/media/compose.js';
import { sniffBufferType } from '../../platform/media/sniff.js';
import { bundleBytes, currentBundles, findWidget, keptBundleShas, previewUpload, storePreviewUpload } from './widgets.repo.js';
import { widgetBundleFor } from './widgets.service.js';

/**
 * Widget preview images (issue 19, docs/widgets.md "Preview image"). GET answers, in order:
 * an uploaded image still valid for the widget (uploaded for its current template, settings
 * and binding), a screenshot of the current bundle by headless Chromium when the server has
 * one (PLACARD_CHROMIUM, else chromium / chromium-browser on PATH; one at a time, 20 s at
 * most, cached per bundle sha256 and size in the data directory), else an honest placeholder
 * drawn with sharp saying no browser is there to draw it.
 */

export const MAX_PREVIEW_UPLOAD_BYTES = 5 * 1024 * 1024;
/** What an uploaded preview may be (by its Content-Type and by its bytes). */
export const PREVIEW_UPLOAD_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
export const CHROMIUM_TIMEOUT_MS = 20_000;
export const DEFAULT_PREVIEW = { width: 1280, height: 720 };

/** One Chromium at a time per app. */
const QUEUE = new ScopeKey('widgets.chromium-queue', () => ({ tail: Promise.resolve() as Promise<unknown>, waiting: 0 }));
/** Drawings waiting for the browser beyond which a request gets the placeholder (any viewer may ask, at any size). */
export const MAX_WAITING_DRAWINGS = 4;
const cacheDirOf = (deps: AppDeps) => path.join(deps.config.dataDir, 'widget-previews');

/** The Chromium to use: PLACARD_CHROMIUM when set (missing: none), else chromium or chromium-browser on PATH. */
export function chromiumOf(deps: AppDeps): string | null {
  const executable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (deps.config.chromiumPath) return executable(deps.config.chromiumPath) ? deps.config.chromiumPath : null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean))
    for (const name of ['chromium', 'chromium-browser']) if (executable(path.join(dir, name))) return path.join(dir, name);
  return null;
}

export async function previewPng(
  deps: AppDeps,
  widgetId: string,
  size: { width: number; height: number },
): Promise<{ png: Buffer; kind: 'uploaded' | 'chromium' | 'placeholder' }> {
  const sharp = await loadSharp();
  const widget = await findWidget(deps.db, widgetId);
  if (!widget) throw notFound('Widget');
  const uploaded = await previewUpload(deps.db, widgetId);
  if (uploaded && uploaded.content_revision === widget.content_revision) return { png: uploaded.bytes, kind: 'uploaded' };
  const answer = await widgetBundleFor(deps, widgetId);
  if (!answer.ok) return { png: await placeholder(widget.name, widget.type, size, answer.message), kind: 'placeholder' };
  const chromium = chromiumOf(deps);
  if (!chromium) return { png: await placeholder(widget.name, widget.type, size, 'no browser on this server to draw a preview'), kind: 'placeholder' };
  const cacheDir = cacheDirOf(deps);
  const file = path.join(cacheDir, `${answer.bundle.sha256}-${size.width}x${size.height}.png`);
  if (existsSync(file)) return { png: readFileSync(file), kind: 'chromium' };
  const bundle = (await currentBundles(deps.db, [widgetId])).get(widgetId);
  const html = bundle ? await bundleBytes(deps.db, bundle.sha256) : undefined;
  if (!html) return { png: await placeholder(widget.name, widget.type, size, 'the bundle is gone'), kind: 'placeholder' };
  const queue = deps.scope.get(QUEUE);
  if (queue.waiting >= MAX_WAITING_DRAWINGS)
    return { png: await placeholder(widget.name, widget.type, size, 'the preview browser is busy; try again shortly'), kind: 'placeholder' };
  queue.waiting++;
  const run = queue.tail.then(() => screenshot(chromium, html, size)).finally(() => queue.waiting--);
  queue.tail = run.catch(() => undefined);
  try {
    const shot = await run;
    // Chromium draws at the window's size; sharp makes sure of it (and of the format).
    const png = await sharp(shot).resize(size.width, size.height, { fit: 'cover', position: 'top' }).png().toBuffer();
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${file}.tmp`, png);
    renameSync(`${file}.tmp`, file);
    return { png, kind: 'chromium' };
  } catch (err) {
    deps.logger.warn({ err, widgetId }, 'Chromium could not draw a widget preview');
    return { png: await placeholder(widget.name, widget.type, size, 'the browser could not draw a preview'), kind: 'placeholder' };
  }
}

async function screenshot(chromium: string, html: Buffer, size: { width: number; height: number }): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'placard-widget-'));
  try {
    await writeFile(path.join(dir, 'bundle.html'), html);
    const shot = path.join(dir, 'shot.png');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        chromium,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--hide-scrollbars',
          `--user-data-dir=${path.join(dir, 'profile')}`,
          `--screenshot=${shot}`,
          `--window-size=${size.width},${size.height}`,
          '--virtual-time-budget=2000',
          `file://${path.join(dir, 'bundle.html')}`,
        ],
        { stdio: 'ignore' },
      );
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('Chromium took longer than 20 s'));
      }, CHROMIUM_TIMEOUT_MS);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (existsSync(shot)) resolve();
        else reject(new Error(`Chromium exited with ${code} and no screenshot`));
      });
    });
    return await readFile(shot);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const xml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A PNG of the size saying what the widget is and why there is no picture of it. */
export async function placeholder(name: string, type: string, size: { width: number; height: number }, why: string): Promise<Buffer> {
  const sharp = await loadSharp();
  const { width, height } = size;
  const f = Math.max(8, Math.round(Math.min(width, height) / 14));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#e5e7eb"/><g font-family="sans-serif" fill="#374151" text-anchor="middle"><text x="50%" y="42%" font-size="${f}" font-weight="bold">${xml(name.slice(0, 80))}</text><text x="50%" y="54%" font-size="${Math.round(f * 0.7)}">${xml(type)} widget</text><text x="50%" y="66%" font-size="${Math.round(f * 0.5)}">${xml(why.slice(0, 120))}</text></g></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** Stores an uploaded preview (PNG, JPEG or WebP, sniffed; kept as PNG) for the widget's current content. */
export async function storeUploadedPreview(deps: AppDeps, widgetId: string, bytes: Buffer, userId: string | null): Promise<void> {
  const widget = await findWidget(deps.db, widgetId);
  if (!widget) throw notFound('Widget');
  if (bytes.length === 0) throw new ApiError('validation_failed', 'The body is empty: send the image');
  if (!PREVIEW_UPLOAD_TYPES.includes((await sniffBufferType(bytes)) ?? ''))
    throw new ApiError('unsupported_media_type', 'The body is not a PNG, JPEG or WebP image');
  let png: Awaited<ReturnType<typeof normalizePreviewImage>>;
  try {
    png = await normalizePreviewImage(bytes);
  } catch {
    throw new ApiError('validation_failed', 'The body is not an image this server can read');
  }
  await storePreviewUpload(deps.db, {
    widget_id: widgetId,
    content_revision: widget.content_revision,
    bytes: png.data,
    width: png.width,
    height: png.height,
    uploaded_at: nowIso(),
    uploaded_by: userId,
  });
}

export const previewEtag = (png: Buffer) => `"${createHash('sha256').update(png).digest('hex').slice(0, 32)}"`;

/** Drawn previews of bundles no longer kept (an edit or a data change made newer ones) are deleted. */
export async function pruneDrawnPreviews(deps: AppDeps): Promise<number> {
  const dir = cacheDirOf(deps);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const kept = await keptBundleShas(deps.db);
  let removed = 0;
  for (const name of names) {
    if (kept.has(name.slice(0, 64))) continue;
    await rm(path.join(dir, name), { force: true });
    removed++;
  }
  return removed;
}
