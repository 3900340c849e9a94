/**
 * The screenshot command's picture: what is visible on the stage drawn into a JPEG data URL.
 * Images and video frames are drawn where they show; data zones' tables are drawn as text in
 * their cells, with the pictures of their image cells (backgrounds, lines and the layout's
 * images are not); pages in frames cannot be drawn and stay black.
 */
import { fitCanvas } from './geometry.js';

export function drawScreenshot(stage: HTMLElement, maxWidth = 1280): string | null {
  const width = innerWidth;
  const height = innerHeight;
  const scale = Math.min(1, maxWidth / width);
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  const g = canvas.getContext('2d');
  if (!g) return null;
  g.fillStyle = '#000';
  g.fillRect(0, 0, canvas.width, canvas.height);
  const pictures = stage.querySelectorAll<HTMLImageElement | HTMLVideoElement>('.pl-layer.pl-visible .pl-media, .pl-content.pl-visible .pl-data-img');
  for (const media of pictures) {
    const r = media.getBoundingClientRect();
    const nw = media instanceof HTMLVideoElement ? media.videoWidth : media.naturalWidth;
    const nh = media instanceof HTMLVideoElement ? media.videoHeight : media.naturalHeight;
    if (!nw || !nh) continue;
    const fit = fitCanvas({ width: nw, height: nh }, { width: r.width, height: r.height });
    try {
      g.drawImage(media, (r.left + fit.offsetX) * scale, (r.top + fit.offsetY) * scale, nw * fit.scale * scale, nh * fit.scale * scale);
    } catch {
      // A frame that cannot be drawn is left black.
    }
  }
  drawTables(stage, g, scale);
  return canvas.toDataURL('image/jpeg', 0.8);
}

/** Each visible data table cell's text, in its cell's colour and size, clipped to the cell. */
function drawTables(stage: HTMLElement, g: CanvasRenderingContext2D, scale: number): void {
  for (const cell of stage.querySelectorAll<HTMLElement>(
    '.pl-content.pl-visible .pl-data th, .pl-content.pl-visible .pl-data td, .pl-content.pl-visible .pl-data-page',
  )) {
    const style = getComputedStyle(cell);
    const text = style.textTransform === 'uppercase' ? (cell.textContent ?? '').toUpperCase() : (cell.textContent ?? '');
    const r = cell.getBoundingClientRect();
    if (!text || r.width <= 0 || r.height <= 0) continue;
    // The canvas a layout sits on is scaled: the drawn size follows the cell's on-screen height.
    const zoom = cell.offsetHeight > 0 ? r.height / cell.offsetHeight : 1;
    const px = parseFloat(style.fontSize) * zoom * scale;
    const padX = parseFloat(style.paddingLeft) * zoom * scale;
    const align = style.textAlign === 'right' || style.textAlign === 'end' ? 'right' : style.textAlign === 'center' ? 'center' : 'left';
    g.save();
    g.beginPath();
    g.rect(r.left * scale, r.top * scale, r.width * scale, r.height * scale);
    g.clip();
    g.font = `${style.fontStyle} ${style.fontWeight} ${px}px ${style.fontFamily}`;
    g.letterSpacing = style.letterSpacing === 'normal' ? '0px' : `${parseFloat(style.letterSpacing) * zoom * scale}px`;
    g.fillStyle = style.color;
    g.textAlign = align;
    g.textBaseline = 'middle';
    const x = align === 'right' ? r.right * scale - padX : align === 'center' ? (r.left + r.width / 2) * scale : r.left * scale + padX;
    g.fillText(text, x, (r.top + r.height / 2) * scale);
    g.restore();
  }
}
