import path from 'node:path';
import type { Metadata, SharpOptions } from 'sharp';
import { loadSharp, type Sharp } from './sharp.js';

export interface RenderedFile {
  file: string;
  purpose: 'player' | 'thumbnail' | 'poster' | 'preview';
  contentType: string;
  width: number | null;
  height: number | null;
  page?: number;
}

export interface ImageInfo {
  width: number;
  height: number;
  format: string;
  animated: boolean;
  frames: number;
}

/** Player variant widths (DESIGN.md section 5): made when the source is larger. */
export const PLAYER_WIDTHS = [1920, 3840] as const;
export const THUMBNAIL_SIZE = 400;

/** Formats every browser displays as they are. */
const BROWSER_IMAGE = new Set(['jpeg', 'png', 'gif', 'webp']);

export class ImageRejected extends Error {}

/**
 * An animation's whole budget, in pixels of all its frames together, as a multiple of the
 * per-frame limit (PLACARD_IMAGE_MAX_PIXELS). sharp's `limitInputPixels` counts every
 * frame when it reads an animation (lovell/sharp#3421), so the per-frame limit alone would
 * refuse an ordinary 1920x1080 GIF of 130 frames; this budget (default about 1.07
 * gigapixels: some 500 frames of 1920x1080) bounds the work instead.
 */
export const ANIMATION_BUDGET_FRAMES = 4;

export function animationBudget(maxPixels: number): number {
  return maxPixels * ANIMATION_BUDGET_FRAMES;
}

function open(sharp: Sharp, file: string, maxPixels: number, options: SharpOptions = {}) {
  return sharp(file, { limitInputPixels: maxPixels, failOn: 'error', sequentialRead: true, ...options });
}

/**
 * Dimensions after EXIF orientation, format and animation; refuses pixel floods: a frame
 * over `maxPixels`, or an animation over its budget (animationBudget).
 */
export async function probeImage(file: string, maxPixels: number): Promise<ImageInfo> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    // Headers only (nothing is decoded): the limits are checked below, with clear reasons.
    meta = await open(sharp, file, maxPixels, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImageRejected(`not a readable image: ${(err as Error).message}`);
  }
  if (!meta.width || !meta.height) throw new ImageRejected('the image has no dimensions');
  const pageHeight = meta.pageHeight ?? meta.height;
  const frames = meta.pages ?? 1;
  if (meta.width * pageHeight > maxPixels) {
    throw new ImageRejected(`the image has ${meta.width * pageHeight} pixels, more than the ${maxPixels} allowed`);
  }
  const animated = frames > 1 && (meta.format === 'gif' || meta.format === 'webp');
  const total = meta.width * pageHeight * frames;
  if (animated && total > animationBudget(maxPixels)) {
    throw new ImageRejected(
      `the animation has ${frames} frames of ${meta.width}x${pageHeight}, ${total} pixels in all, more than the ${animationBudget(maxPixels)} allowed for an animation (${ANIMATION_BUDGET_FRAMES} x PLACARD_IMAGE_MAX_PIXELS); shorten it or make it smaller`,
    );
  }
  const rotated = (meta.orientation ?? 1) >= 5;
  return {
    width: rotated ? pageHeight : meta.width,
    height: rotated ? meta.width : pageHeight,
    format: meta.format ?? 'unknown',
    animated,
    frames,
  };
}

/** Widths of the player variants of a source `width` wide (never upscaled). */
export function playerWidths(width: number): number[] {
  if (width <= PLAYER_WIDTHS[0]) return [width];
  if (width <= PLAYER_WIDTHS[1]) return [PLAYER_WIDTHS[0], width];
  return [...PLAYER_WIDTHS];
}

/**
 * Thumbnail and player variants of an image: EXIF orientation applied, WebP and JPEG at
 * the player widths, animated GIF/WebP kept animated (animated WebP), SVG rasterised
 * (at a density that renders the largest width sharply).
 */
export async function renderImage(file: string, info: ImageInfo, outDir: string, maxPixels: number, isSvg: boolean): Promise<RenderedFile[]> {
  const sharp = await loadSharp();
  const out: RenderedFile[] = [];
  const base = (w: number, options: SharpOptions = {}) => {
    if (isSvg) {
      const density = Math.min(2400, Math.max(72, Math.ceil((72 * w) / info.width)));
      return open(sharp, file, maxPixels, { density, ...options });
    }
    return open(sharp, file, maxPixels, options);
  };

  const thumb = path.join(outDir, 'thumbnail.webp');
  const t = await base(THUMBNAIL_SIZE)
    .rotate()
    .resize({ width: THUMBNAIL_SIZE, height: THUMBNAIL_SIZE, fit: 'inside', withoutEnlargement: !isSvg })
    .webp({ quality: 80 })
    .toFile(thumb);
  out.push({ file: thumb, purpose: 'thumbnail', contentType: 'image/webp', width: t.width, height: t.height });

  const widths = isSvg ? [Math.min(PLAYER_WIDTHS[0], Math.max(info.width, PLAYER_WIDTHS[0]))] : playerWidths(info.width);
  for (const w of widths) {
    if (info.animated) {
      const f = path.join(outDir, `player-${w}.webp`);
      // sharp counts all frames against limitInputPixels: the animation's budget applies (checked by probeImage).
      const r = await base(w, { animated: true, limitInputPixels: animationBudget(maxPixels) })
        .resize({ width: w, withoutEnlargement: true })
        .webp({ quality: 82, effort: 2 })
        .toFile(f);
      out.push({ file: f, purpose: 'player', contentType: 'image/webp', width: r.width, height: Math.round((info.height * r.width) / info.width) });
      continue;
    }
    const webp = path.join(outDir, `player-${w}.webp`);
    const rw = await base(w).rotate().resize({ width: w, withoutEnlargement: !isSvg }).webp({ quality: 85, effort: 3 }).toFile(webp);
    out.push({ file: webp, purpose: 'player', contentType: 'image/webp', width: rw.width, height: rw.height });
    const jpeg = path.join(outDir, `player-${w}.jpg`);
    const rj = await base(w)
      .rotate()
      .resize({ width: w, withoutEnlargement: !isSvg })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 85, mozjpeg: true })
      .toFile(jpeg);
    out.push({ file: jpeg, purpose: 'player', contentType: 'image/jpeg', width: rj.width, height: rj.height });
  }
  if (!isSvg && !BROWSER_IMAGE.has(info.format)) {
    // TIFF, HEIF, AVIF...: the console previews a WebP instead of the original.
    const f = path.join(outDir, 'preview.webp');
    const r = await base(PLAYER_WIDTHS[0]).rotate().resize({ width: PLAYER_WIDTHS[0], withoutEnlargement: true }).webp({ quality: 85 }).toFile(f);
    out.push({ file: f, purpose: 'preview', contentType: 'image/webp', width: r.width, height: r.height });
  }
  return out;
}

/** A thumbnail (and optionally a poster) from a still frame or page image. */
export async function renderStill(file: string, outDir: string, maxPixels: number, poster: boolean): Promise<RenderedFile[]> {
  const sharp = await loadSharp();
  const out: RenderedFile[] = [];
  const thumb = path.join(outDir, 'thumbnail.webp');
  const t = await open(sharp, file, maxPixels)
    .resize({ width: THUMBNAIL_SIZE, height: THUMBNAIL_SIZE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 80 })
    .toFile(thumb);
  out.push({ file: thumb, purpose: 'thumbnail', contentType: 'image/webp', width: t.width, height: t.height });
  if (poster) {
    const p = path.join(outDir, 'poster.jpg');
    const r = await open(sharp, file, maxPixels).resize({ width: PLAYER_WIDTHS[0], withoutEnlargement: true }).jpeg({ quality: 85 }).toFile(p);
    out.push({ file: p, purpose: 'poster', contentType: 'image/jpeg', width: r.width, height: r.height });
  }
  return out;
}
