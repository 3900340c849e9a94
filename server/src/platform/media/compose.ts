/**
 * Layout preview images: the canvas in its background colour, each zone's thumbnail
 * fitted into its box in z-order, and an outline with the zone's name where a zone has
 * nothing to show. Rendered with sharp, scaled so the longer side is at most `maxSide`.
 */
import type { OverlayOptions } from 'sharp';
import { loadSharp } from './sharp.js';

export interface PreviewZone {
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  name: string;
  fit: 'contain' | 'cover' | 'fill';
  /** A thumbnail file (or bytes) to show in the zone; absent: an outline. */
  image?: string | Buffer | null;
}

export interface PreviewInput {
  width: number;
  height: number;
  background: string;
  backgroundImage?: string | Buffer | null;
  zones: readonly PreviewZone[];
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** PNG bytes of the preview. */
export async function composeLayoutPreview(input: PreviewInput, maxSide = 960): Promise<Buffer> {
  const sharp = await loadSharp();
  const scale = Math.min(1, maxSide / Math.max(input.width, input.height));
  const W = Math.max(1, Math.round(input.width * scale));
  const H = Math.max(1, Math.round(input.height * scale));
  const layers: OverlayOptions[] = [];
  if (input.backgroundImage) {
    const bg = await tryResize(input.backgroundImage, W, H, 'cover');
    if (bg) layers.push({ input: bg, left: 0, top: 0 });
  }
  const zones = [...input.zones].sort((a, b) => a.zIndex - b.zIndex);
  for (const z of zones) {
    const left = Math.min(W - 1, Math.round(z.x * scale));
    const top = Math.min(H - 1, Math.round(z.y * scale));
    const w = Math.max(1, Math.min(W - left, Math.round(z.width * scale)));
    const h = Math.max(1, Math.min(H - top, Math.round(z.height * scale)));
    const image = z.image ? await tryResize(z.image, w, h, z.fit) : null;
    if (image) {
      layers.push({ input: image, left, top });
      continue;
    }
    const font = Math.max(8, Math.min(28, Math.round(h / 6)));
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
      <rect x="0.5" y="0.5" width="${Math.max(0, w - 1)}" height="${Math.max(0, h - 1)}" fill="rgba(128,128,128,0.35)" stroke="rgba(255,255,255,0.8)" stroke-width="1" stroke-dasharray="6 4"/>
      <text x="${w / 2}" y="${h / 2}" font-family="sans-serif" font-size="${font}" fill="#ffffff" text-anchor="middle" dominant-baseline="middle">${escapeXml(z.name.slice(0, 60))}</text>
    </svg>`;
    layers.push({ input: Buffer.from(svg), left, top });
  }
  return sharp({ create: { width: W, height: H, channels: 4, background: input.background } })
    .composite(layers)
    .png()
    .toBuffer();
}

/** The image fitted into w x h (a transparent letterbox for contain), or null when unreadable. */
async function tryResize(source: string | Buffer, w: number, h: number, fit: 'contain' | 'cover' | 'fill'): Promise<Buffer | null> {
  const sharp = await loadSharp();
  try {
    return await sharp(source, { limitInputPixels: 100_000_000 })
      .rotate()
      .resize(w, h, { fit, background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
  } catch {
    return null;
  }
}

/** Checks an uploaded preview is an image sharp reads; answers it as PNG or WebP as given. */
export async function normalizePreviewImage(bytes: Buffer, maxSide = 4096): Promise<{ data: Buffer; contentType: string; width: number; height: number }> {
  const sharp = await loadSharp();
  const image = sharp(bytes, { limitInputPixels: 100_000_000 }).rotate();
  const meta = await image.metadata();
  if (!meta.width || !meta.height) throw new Error('not an image');
  const data = await image.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true }).png().toBuffer({ resolveWithObject: true });
  return { data: data.data, contentType: 'image/png', width: data.info.width, height: data.info.height };
}
