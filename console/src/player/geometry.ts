/**
 * Layout geometry: a layout's canvas scaled to the viewport, letterboxed and centred
 * (aspect ratio kept), and each zone's rectangle in the scaled canvas.
 */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Fit {
  scale: number;
  offsetX: number;
  offsetY: number;
}

export function fitCanvas(canvas: { width: number; height: number }, viewport: { width: number; height: number }): Fit {
  if (canvas.width <= 0 || canvas.height <= 0 || viewport.width <= 0 || viewport.height <= 0) return { scale: 1, offsetX: 0, offsetY: 0 };
  const scale = Math.min(viewport.width / canvas.width, viewport.height / canvas.height);
  return { scale, offsetX: (viewport.width - canvas.width * scale) / 2, offsetY: (viewport.height - canvas.height * scale) / 2 };
}

/** A zone's rectangle in canvas pixels, clipped to the canvas. */
export function zoneRect(zone: Rect, canvas: { width: number; height: number }): Rect {
  const x = Math.max(0, Math.min(zone.x, canvas.width));
  const y = Math.max(0, Math.min(zone.y, canvas.height));
  return { x, y, width: Math.max(0, Math.min(zone.width, canvas.width - x)), height: Math.max(0, Math.min(zone.height, canvas.height - y)) };
}
