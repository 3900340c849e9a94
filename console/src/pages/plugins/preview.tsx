import { useState } from 'preact/hooks';
import type { BrandBugConfig, Choices, ConfigOf, Corner, CountdownConfig, InstancePluginId, NoiseMeterConfig } from './model';
import { displayOf } from './model';

/**
 * The live preview of an overlay at a screen's size (docs/console-plugins.md): a box with the
 * screen's aspect ratio, the overlay drawn in it in % of the screen, as the browser player places
 * it (position, size, colours, text). Sizes use container units (cqw/cqh), so the box scales
 * the whole screen down without changing the proportions.
 */

const FALLBACK = { width: 1920, height: 1080 };

export function OverlayPreview<P extends InstancePluginId>({ plugin, config, choices }: { plugin: P; config: ConfigOf[P]; choices: Choices }) {
  const [screenId, setScreenId] = useState('');
  const screen = choices.screens.find((s) => s.id === screenId);
  const size = (screen && displayOf(screen)) ?? FALLBACK;
  // What moment to show: minutes before zero for a countdown, a sample level for a noise meter.
  const countdown = plugin === 'countdown-bar' ? (config as CountdownConfig) : null;
  const noise = plugin === 'noise-meter' ? (config as NoiseMeterConfig) : null;
  const [minutesLeft, setMinutesLeft] = useState<number | null>(null);
  const [level, setLevel] = useState<number | null>(null);
  const left = countdown ? Math.min(countdown.windowMin, Math.max(-countdown.afterZero.forMin - 1, minutesLeft ?? Math.round(countdown.windowMin / 2))) : 0;
  const sample = noise ? (level ?? Math.round((noise.warningLevel + noise.loudLevel) / 2)) : 0;
  return (
    <section class="overlay-preview" aria-labelledby="preview-h" data-testid="overlay-preview">
      <h2 id="preview-h">Preview</h2>
      <label>
        At the size of
        <select value={screenId} onChange={(e) => setScreenId(e.currentTarget.value)}>
          <option value="">A 1920 × 1080 screen</option>
          {choices.screens.map((s) => {
            const d = displayOf(s);
            return (
              <option key={s.id} value={s.id}>
                {s.name} ({d ? `${d.width} × ${d.height}` : 'size not reported: 1920 × 1080'})
              </option>
            );
          })}
        </select>
      </label>
      {countdown && (
        <label>
          Moment shown: {left >= 0 ? `${left} min before zero` : `${-left} min after zero`}
          <input
            type="range"
            min={-countdown.afterZero.forMin - 1}
            max={countdown.windowMin}
            step={1}
            value={left}
            onInput={(e) => setMinutesLeft(Number(e.currentTarget.value))}
          />
        </label>
      )}
      {noise && (
        <label>
          Sample level: {sample}
          <input type="range" min={0} max={100} step={1} value={sample} onInput={(e) => setLevel(Number(e.currentTarget.value))} />
        </label>
      )}
      <div
        class="preview-screen"
        style={{ aspectRatio: `${size.width} / ${size.height}` }}
        data-width={size.width}
        data-height={size.height}
        role="img"
        aria-label={`The overlay on a ${size.width} × ${size.height} screen`}
      >
        {/* A picture (its words are the label above): the colours are the overlay's own, as chosen. */}
        <div class="preview-drawing" aria-hidden="true">
          <span class="preview-content">Content</span>
          {countdown && <CountdownDrawing config={countdown} minutesLeft={left} />}
          {plugin === 'brand-bug' && <BrandBugDrawing config={config as BrandBugConfig} />}
          {noise && <NoiseDrawing config={noise} level={sample} />}
        </div>
      </div>
      <small class="muted">
        {size.width} × {size.height} pixels{screen && !displayOf(screen) ? ' (this screen has not reported its size yet)' : ''}.
      </small>
    </section>
  );
}

const mmss = (min: number) => {
  const s = Math.round(Math.abs(min) * 60);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
};

function CountdownDrawing({ config, minutesLeft }: { config: CountdownConfig; minutesLeft: number }) {
  const after = minutesLeft < 0;
  if (after && (config.afterZero.show === 'hide' || -minutesLeft > config.afterZero.forMin)) return <p class="preview-note">Hidden (after zero)</p>;
  const share = after ? 0 : Math.max(0, Math.min(1, minutesLeft / config.windowMin));
  const text = after
    ? config.afterZero.show === 'message'
      ? config.afterZero.text
      : `+${mmss(minutesLeft)}`
    : `${config.label ? `${config.label} ` : ''}${mmss(minutesLeft)}`;
  return (
    <div
      class="ov-countdown"
      data-overlay="countdown-bar"
      style={{
        [config.position]: 0,
        height: `${config.heightPct}cqh`,
        background: config.colors.background,
      }}
    >
      <div class="ov-countdown-fill" data-share={share.toFixed(3)} style={{ width: `${share * 100}%`, background: config.colors.bar }} />
      {/* SVG text: a picture of the screen's text at the screen's scale (tiny here, large on the screen). */}
      <svg class="ov-countdown-svg" width="100%" height="100%" aria-hidden="true">
        <text
          x="2%"
          y="50%"
          dominant-baseline="central"
          fill={config.colors.text}
          style={{ fontSize: `${config.heightPct * 0.55}cqh` }}
          class="ov-countdown-text"
        >
          {text}
        </text>
      </svg>
    </div>
  );
}

/** Top/left/right/bottom for a corner, `margin` in cqw. */
function cornerStyle(corner: Corner, margin: number): Record<string, string> {
  const [v, h] = corner.split('-') as ['top' | 'bottom', 'left' | 'right'];
  return { [v]: `${margin}cqw`, [h]: `${margin}cqw` };
}

function BrandBugDrawing({ config }: { config: BrandBugConfig }) {
  if (!config.assetId) return <p class="preview-note">Choose a logo to see it here.</p>;
  return (
    <img
      class="ov-brand"
      data-overlay="brand-bug"
      src={`/api/v1/assets/${config.assetId}/preview`}
      alt=""
      style={{ ...cornerStyle(config.corner, config.marginPct), width: `${config.sizePct}cqw`, opacity: config.opacity }}
    />
  );
}

/** The player's colours (console/src/player/overlays.ts): green, amber, red. */
export const NOISE_COLOURS = { normal: '#16a34a', warning: '#f59e0b', loud: '#dc2626' };
export function noiseState(level: number, c: NoiseMeterConfig): 'normal' | 'warning' | 'loud' {
  return level >= c.loudLevel ? 'loud' : level >= c.warningLevel ? 'warning' : 'normal';
}

function NoiseDrawing({ config, level }: { config: NoiseMeterConfig; level: number }) {
  if (config.display === 'hidden') return <p class="preview-note">Nothing shown: the meter only measures.</p>;
  const state = noiseState(level, config);
  const colour = NOISE_COLOURS[state];
  const box = { ...cornerStyle(config.corner, 2), width: `${config.sizePct}cqw` };
  return (
    <>
      <div class={`ov-noise ov-noise-${config.display}`} data-overlay="noise-meter" data-state={state} style={box}>
        {config.display === 'bar' && (
          <div class="ov-noise-track">
            <div class="ov-noise-level" style={{ width: `${level}%`, background: colour }} />
          </div>
        )}
        {config.display === 'dial' && (
          <svg viewBox="0 0 100 60" class="ov-noise-dial" aria-hidden="true">
            <path d="M10 55 A40 40 0 0 1 90 55" fill="none" stroke="#ffffff55" stroke-width="10" />
            <path d="M10 55 A40 40 0 0 1 90 55" fill="none" stroke={colour} stroke-width="10" pathLength={100} stroke-dasharray={`${level} 100`} />
          </svg>
        )}
        {config.display === 'traffic-light' && (
          <div class="ov-noise-lights">
            {(['loud', 'warning', 'normal'] as const).map((s) => (
              <span key={s} style={{ background: s === state ? NOISE_COLOURS[s] : '#3f3f46' }} />
            ))}
          </div>
        )}
      </div>
      {state === 'loud' && config.loudMessage && (
        <div class="ov-noise-message" style={{ background: NOISE_COLOURS.loud }}>
          {config.loudMessage}
        </div>
      )}
    </>
  );
}
