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

/**
 * A zone's rectangle in canvas pixels. Zones may be given in canvas pixels or as
 * fractions of the canvas (all of x, y, width, height within 0..1).
 */
export function zoneRect(zone: Rect, canvas: { width: number; height: number }): Rect {
  const fractional = [zone.x, zone.y, zone.width, zone.height].every((v) => v >= 0 && v <= 1) && (zone.width < 1 || zone.height < 1 || canvas.width <= 1);
  const r = fractional
    ? { x: zone.x * canvas.width, y: zone.y * canvas.height, width: zone.width * canvas.width, height: zone.height * canvas.height }
    : { ...zone };
  // Clip to the canvas.
  const x = Math.max(0, Math.min(r.x, canvas.width));
  const y = Math.max(0, Math.min(r.y, canvas.height));
  return { x, y, width: Math.max(0, Math.min(r.width, canvas.width - x)), height: Math.max(0, Math.min(r.height, canvas.height - y)) };
}
