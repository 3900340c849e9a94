/**
 * Gives the event loop a turn during long synchronous work done in steps: `await pace()`
 * between steps yields (setImmediate) once `sliceMs` have passed since the last turn, so
 * other requests are served meanwhile and a loop of cheap steps costs nothing extra.
 */
export function pacer(sliceMs = 10): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
