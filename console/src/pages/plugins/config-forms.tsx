import type { ApiError } from '../../api';
import type { BrandBugConfig, Choices, Corner, CountdownConfig, NoiseMeterConfig } from './model';
import { CORNERS, fromLocalInput, toLocalInput, WEEKDAYS } from './model';

/**
 * The config forms of the three overlay plugins. Each edits its whole config (the server fills
 * and checks the rest); a field the server refused shows its message under it.
 */

type Err = ApiError | null;
const at = (error: Err, ...path: (string | number)[]) => error?.messageAt(['config', ...path]);

function FieldError({ message }: { message: string | undefined }) {
  return message ? <small class="field-error">{message}</small> : null;
}

function NumberField({
  label,
  value,
  min,
  max,
  step = 1,
  error,
  onChange,
}: {
  label: string;
  value: number;
  min: number;
  max: number;
  step?: number;
  error?: string;
  onChange: (n: number) => void;
}) {
  return (
    <label>
      {label}
      <input
        type="number"
        min={min}
        max={max}
        step={step}
        value={value}
        aria-invalid={error ? true : undefined}
        onInput={(e) => {
          const n = e.currentTarget.valueAsNumber;
          if (Number.isFinite(n)) onChange(n);
        }}
      />
      <FieldError message={error} />
    </label>
  );
}

function CornerField({ value, onChange }: { value: Corner; onChange: (c: Corner) => void }) {
  return (
    <label>
      Corner
      <select value={value} onChange={(e) => onChange(e.currentTarget.value as Corner)}>
        {CORNERS.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A colour as text (#rgb, #rrggbb, #rrggbbaa) with a swatch picker for its colour part (the alpha part is kept). */
function ColourField({ label, value, error, onChange }: { label: string; value: string; error?: string; onChange: (v: string) => void }) {
  const hex = /^#[0-9a-f]{3}$/i.test(value) ? `#${[...value.slice(1)].map((c) => c + c).join('')}` : value.slice(0, 7);
  const alpha = /^#[0-9a-f]{8}$/i.test(value) ? value.slice(7) : '';
  return (
    <div class="colour-field">
      <label>
        {label}
        <input
          type="text"
          value={value}
          maxLength={9}
          spellcheck={false}
          aria-invalid={error ? true : undefined}
          onInput={(e) => onChange(e.currentTarget.value.trim())}
        />
      </label>
      <input
        type="color"
        aria-label={`${label}: pick`}
        value={/^#[0-9a-f]{6}$/i.test(hex) ? hex : '#000000'}
        onInput={(e) => onChange(e.currentTarget.value + alpha)}
      />
      <FieldError message={error} />
    </div>
  );
}

export function CountdownFields({ value, onChange, error }: { value: CountdownConfig; onChange: (c: CountdownConfig) => void; error: Err }) {
  const t = value.target;
  const days = t.type === 'daily' ? (t.weekdays ?? []) : [];
  return (
    <>
      <fieldset>
        <legend>Counts down to</legend>
        <label>
          <input
            type="radio"
            name="target-type"
            checked={t.type === 'daily'}
            onChange={() => onChange({ ...value, target: { type: 'daily', time: '12:00' } })}
          />{' '}
          A time every day (each screen’s own time)
        </label>
        <label>
          <input type="radio" name="target-type" checked={t.type === 'at'} onChange={() => onChange({ ...value, target: { type: 'at', at: '' } })} /> One date
          and time
        </label>
        {t.type === 'daily' ? (
          <>
            <label>
              Time
              <input type="time" value={t.time} required onInput={(e) => onChange({ ...value, target: { ...t, time: e.currentTarget.value } })} />
              <FieldError message={at(error, 'target', 'time')} />
            </label>
            <fieldset class="checks" aria-describedby="weekdays-help">
              <legend>On</legend>
              {WEEKDAYS.map((d) => (
                <label key={d.value}>
                  <input
                    type="checkbox"
                    checked={days.includes(d.value)}
                    onChange={(e) => {
                      const next = e.currentTarget.checked ? [...days, d.value].sort() : days.filter((x) => x !== d.value);
                      const { weekdays: _drop, ...rest } = t;
                      onChange({ ...value, target: next.length ? { ...rest, weekdays: next } : rest });
                    }}
                  />{' '}
                  {d.label}
                </label>
              ))}
              <small id="weekdays-help" class="muted checks-help">
                None ticked: every day.
              </small>
            </fieldset>
          </>
        ) : (
          <label>
            Date and time
            <input
              type="datetime-local"
              required
              value={toLocalInput(t.at)}
              onInput={(e) => onChange({ ...value, target: { type: 'at', at: fromLocalInput(e.currentTarget.value) } })}
            />
            <FieldError message={at(error, 'target', 'at') ?? at(error, 'target')} />
          </label>
        )}
      </fieldset>
      <label>
        Label
        <input value={value.label} maxLength={120} placeholder="e.g. Lunch break in" onInput={(e) => onChange({ ...value, label: e.currentTarget.value })} />
        <FieldError message={at(error, 'label')} />
      </label>
      <div class="grid">
        <NumberField
          label="Shows for the last (minutes)"
          value={value.windowMin}
          min={1}
          max={1440}
          error={at(error, 'windowMin')}
          onChange={(n) => onChange({ ...value, windowMin: n })}
        />
        <label>
          Position
          <select value={value.position} onChange={(e) => onChange({ ...value, position: e.currentTarget.value as 'top' | 'bottom' })}>
            <option value="top">Top</option>
            <option value="bottom">Bottom</option>
          </select>
        </label>
        <NumberField
          label="Height (% of the screen)"
          value={value.heightPct}
          min={2}
          max={20}
          error={at(error, 'heightPct')}
          onChange={(n) => onChange({ ...value, heightPct: n })}
        />
      </div>
      <fieldset>
        <legend>Colours</legend>
        <div class="colour-grid">
          <ColourField
            label="Bar"
            value={value.colors.bar}
            error={at(error, 'colors', 'bar')}
            onChange={(v) => onChange({ ...value, colors: { ...value.colors, bar: v } })}
          />
          <ColourField
            label="Background"
            value={value.colors.background}
            error={at(error, 'colors', 'background')}
            onChange={(v) => onChange({ ...value, colors: { ...value.colors, background: v } })}
          />
          <ColourField
            label="Text"
            value={value.colors.text}
            error={at(error, 'colors', 'text')}
            onChange={(v) => onChange({ ...value, colors: { ...value.colors, text: v } })}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>After zero</legend>
        <div class="grid">
          <label>
            Shows
            <select
              value={value.afterZero.show}
              onChange={(e) => onChange({ ...value, afterZero: { ...value.afterZero, show: e.currentTarget.value as CountdownConfig['afterZero']['show'] } })}
            >
              <option value="hide">Nothing (the bar goes)</option>
              <option value="message">A message</option>
              <option value="count-up">The time since zero</option>
            </select>
          </label>
          {value.afterZero.show === 'message' && (
            <label>
              Message
              <input
                value={value.afterZero.text}
                maxLength={120}
                onInput={(e) => onChange({ ...value, afterZero: { ...value.afterZero, text: e.currentTarget.value } })}
              />
            </label>
          )}
          {value.afterZero.show !== 'hide' && (
            <NumberField
              label="For (minutes)"
              value={value.afterZero.forMin}
              min={0}
              max={1440}
              error={at(error, 'afterZero', 'forMin')}
              onChange={(n) => onChange({ ...value, afterZero: { ...value.afterZero, forMin: n } })}
            />
          )}
        </div>
      </fieldset>
    </>
  );
}

export function BrandBugFields({
  value,
  onChange,
  error,
  choices,
}: {
  value: BrandBugConfig;
  onChange: (c: BrandBugConfig) => void;
  error: Err;
  choices: Choices;
}) {
  const ready = choices.images.filter((a) => a.state === 'ready' || a.id === value.assetId);
  return (
    <>
      <fieldset>
        <legend>Logo</legend>
        {ready.length === 0 && <p class="muted">Upload the logo (an image or SVG) to the library first.</p>}
        <div class="logo-picks" role="radiogroup" aria-label="Logo from the library">
          {ready.map((a) => (
            <label key={a.id} class={a.id === value.assetId ? 'logo-pick chosen' : 'logo-pick'}>
              <input type="radio" name="logo" checked={a.id === value.assetId} onChange={() => onChange({ ...value, assetId: a.id })} />
              <img src={`/api/v1/assets/${a.id}/preview`} alt="" loading="lazy" />
              <span>{a.name}</span>
            </label>
          ))}
        </div>
        <FieldError message={at(error, 'assetId')} />
      </fieldset>
      <div class="grid">
        <CornerField value={value.corner} onChange={(corner) => onChange({ ...value, corner })} />
        <NumberField
          label="Width (% of the screen)"
          value={value.sizePct}
          min={2}
          max={50}
          error={at(error, 'sizePct')}
          onChange={(n) => onChange({ ...value, sizePct: n })}
        />
        <NumberField
          label="Margin (% of the screen)"
          value={value.marginPct}
          min={0}
          max={20}
          error={at(error, 'marginPct')}
          onChange={(n) => onChange({ ...value, marginPct: n })}
        />
      </div>
      <label>
        Opacity: {Math.round(value.opacity * 100)}%
        <input type="range" min={0} max={1} step={0.05} value={value.opacity} onInput={(e) => onChange({ ...value, opacity: e.currentTarget.valueAsNumber })} />
      </label>
      <label>
        <input
          type="checkbox"
          role="switch"
          checked={value.hideDuringFullScreenVideo}
          onChange={(e) => onChange({ ...value, hideDuringFullScreenVideo: e.currentTarget.checked })}
        />{' '}
        Hide while a video fills the screen
      </label>
    </>
  );
}

export function NoiseMeterFields({ value, onChange, error }: { value: NoiseMeterConfig; onChange: (c: NoiseMeterConfig) => void; error: Err }) {
  const mic = value.microphone;
  const setMic = (m: Partial<NoiseMeterConfig['microphone']>) => onChange({ ...value, microphone: { ...mic, ...m } });
  return (
    <>
      <fieldset>
        <legend>Levels (0 quiet to 100 very loud: a relative scale, not decibels)</legend>
        <div class="grid">
          <NumberField
            label="Warning from"
            value={value.warningLevel}
            min={0}
            max={100}
            error={at(error, 'warningLevel')}
            onChange={(n) => onChange({ ...value, warningLevel: n })}
          />
          <NumberField
            label="Loud from"
            value={value.loudLevel}
            min={0}
            max={100}
            error={at(error, 'loudLevel')}
            onChange={(n) => onChange({ ...value, loudLevel: n })}
          />
          <NumberField
            label="Calibration (±)"
            value={value.calibrationOffset}
            min={-50}
            max={50}
            error={at(error, 'calibrationOffset')}
            onChange={(n) => onChange({ ...value, calibrationOffset: n })}
          />
        </div>
      </fieldset>
      <div class="grid">
        <label>
          Display
          <select value={value.display} onChange={(e) => onChange({ ...value, display: e.currentTarget.value as NoiseMeterConfig['display'] })}>
            <option value="bar">Bar</option>
            <option value="dial">Dial</option>
            <option value="traffic-light">Traffic light</option>
            <option value="hidden">Hidden (measure only)</option>
          </select>
        </label>
        <CornerField value={value.corner} onChange={(corner) => onChange({ ...value, corner })} />
        <NumberField
          label="Width (% of the screen)"
          value={value.sizePct}
          min={5}
          max={50}
          error={at(error, 'sizePct')}
          onChange={(n) => onChange({ ...value, sizePct: n })}
        />
      </div>
      <label>
        Message while loud
        <input value={value.loudMessage} maxLength={200} onInput={(e) => onChange({ ...value, loudMessage: e.currentTarget.value })} />
        <FieldError message={at(error, 'loudMessage')} />
      </label>
      <fieldset>
        <legend>Microphone</legend>
        <label>
          Microphone name contains
          <input
            value={mic.deviceLabel}
            maxLength={200}
            placeholder="empty: the default microphone"
            onInput={(e) => setMic({ deviceLabel: e.currentTarget.value })}
          />
        </label>
        <div class="checks">
          <label>
            <input type="checkbox" role="switch" checked={mic.echoCancellation} onChange={(e) => setMic({ echoCancellation: e.currentTarget.checked })} /> Echo
            cancellation
          </label>
          <label>
            <input type="checkbox" role="switch" checked={mic.noiseSuppression} onChange={(e) => setMic({ noiseSuppression: e.currentTarget.checked })} /> Noise
            suppression
          </label>
          <label>
            <input type="checkbox" role="switch" checked={mic.autoGainControl} onChange={(e) => setMic({ autoGainControl: e.currentTarget.checked })} />{' '}
            Automatic gain
          </label>
        </div>
        <small class="muted">Leave the three off for honest levels: they change what the microphone hears.</small>
      </fieldset>
    </>
  );
}
