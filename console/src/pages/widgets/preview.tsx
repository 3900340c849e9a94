import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api';
import { ErrorNote } from '../../ui';
import { type CompileResult, SIZES, type WidgetError } from './model';

/** How long the preview waits after the last change before it asks the server again. */
export const PREVIEW_DEBOUNCE_MS = 400;

/**
 * Asks POST /widgets/compile-preview for the draft (a JSON body) ~400 ms after it last
 * changed; the newest answer wins. `errors` are the compiler's; `error` a refusal of the body.
 */
export function useCompilePreview(bodyJson: string) {
  const [result, setResult] = useState<CompileResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setBusy(true);
    const timer = window.setTimeout(() => {
      api
        .post<CompileResult>('widgets/compile-preview', JSON.parse(bodyJson))
        .then((r) => {
          if (mine !== seq.current) return;
          setResult(r);
          setError(null);
        })
        .catch((err) => {
          if (mine === seq.current) setError(err);
        })
        .finally(() => {
          if (mine === seq.current) setBusy(false);
        });
    }, PREVIEW_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [bodyJson]);
  const errors: WidgetError[] = result?.errors ?? [];
  // While the draft does not compile, the last picture that did stays (the state says it is not updated).
  const lastGood = useRef<string | null>(null);
  if (result?.html) lastGood.current = result.html;
  return { result, html: result?.html || lastGood.current, errors, error, busy };
}

/**
 * The compiled widget in a sandboxed frame (scripts run, but with an opaque origin: no
 * cookies, no API, and the bundle's own CSP forbids the network), drawn at the zone's real
 * size and scaled down to the page, like a screen of that size shows it.
 */
export function WidgetPreview({ html, busy, error, failed }: { html: string | null; busy: boolean; error: unknown; failed: boolean }) {
  const [size, setSize] = useState('0');
  const [custom, setCustom] = useState({ w: 1280, h: 720 });
  const preset = SIZES[Number(size)];
  const w = preset?.w ?? custom.w;
  const h = preset?.h ?? custom.h;
  const box = useRef<HTMLDivElement>(null);
  const [room, setRoom] = useState(600);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setRoom(el.clientWidth);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  // Fit the width, and a tall (portrait) zone to about 60 % of the window's height (the
  // column keeps its heading, size choice and buttons within the window).
  const maxH = Math.max(240, window.innerHeight * 0.6);
  const scale = Math.min(room / w, maxH / h, 1);
  const doc = html === null ? null : withContext(html, w, h);
  return (
    <section class="widget-preview" aria-labelledby="preview-h">
      <div class="row spread">
        <h2 id="preview-h">Preview</h2>
        <small class="muted" aria-live="polite" data-testid="preview-state">
          {busy ? 'Updating…' : failed ? 'Not updated: see the mistakes' : `${w} × ${h}, shown at ${Math.round(scale * 100)} %`}
        </small>
      </div>
      <div class="grid preview-size">
        <label>
          Zone size
          <select value={size} onChange={(e) => setSize(e.currentTarget.value)}>
            {SIZES.map((s, i) => (
              <option key={s.label} value={String(i)}>
                {s.label}
              </option>
            ))}
            <option value="custom">Custom…</option>
          </select>
        </label>
        {!preset && (
          <>
            <label>
              Width (px)
              <input
                type="number"
                min={50}
                max={7680}
                value={custom.w}
                onChange={(e) => setCustom((c) => ({ ...c, w: clamp(Number(e.currentTarget.value)) }))}
              />
            </label>
            <label>
              Height (px)
              <input
                type="number"
                min={50}
                max={7680}
                value={custom.h}
                onChange={(e) => setCustom((c) => ({ ...c, h: clamp(Number(e.currentTarget.value)) }))}
              />
            </label>
          </>
        )}
      </div>
      <ErrorNote error={error} />
      <div class="preview-room" ref={box}>
        <div class="preview-frame" style={{ width: `${w * scale}px`, height: `${h * scale}px` }}>
          {doc !== null && (
            <iframe
              title={`Preview of the widget at ${w} by ${h}`}
              data-testid="widget-preview"
              sandbox="allow-scripts"
              srcdoc={doc}
              width={w}
              height={h}
              style={{ width: `${w}px`, height: `${h}px`, transform: `scale(${scale})`, transformOrigin: '0 0' }}
            />
          )}
        </div>
      </div>
    </section>
  );
}

/** The bundle with the context a player gives it (docs/widgets.md): this browser's zone and language, the zone's size. */
export function withContext(html: string, width: number, height: number): string {
  const context = JSON.stringify({
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    width,
    height,
    locale: navigator.language,
  }).replace(/</g, '\\u003c');
  return html.replace(
    '<script type="application/json" id="placard-context">{}</script>',
    () => `<script type="application/json" id="placard-context">${context}</script>`,
  );
}

const clamp = (n: number) => (Number.isFinite(n) ? Math.min(7680, Math.max(50, Math.round(n))) : 800);
