import type SharpModule from 'sharp';

export type Sharp = typeof SharpModule;

/**
 * sharp, loaded at its first use instead of at start: the module and libvips (with its
 * worker threads) cost ~20 MiB of memory, and a server that processes no image holds none
 * of it (docs/performance.md, "Idle memory"). Node keeps the module once loaded.
 */
export async function loadSharp(): Promise<Sharp> {
  return (await import('sharp')).default;
}
