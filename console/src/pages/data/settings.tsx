import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { ErrorNote } from '../../ui';
import { Field } from '../../ui/fields';
import { TIME_ZONES } from '../places';
import type { Config, DataSource, Inspect, Json, Preview, Provider } from './model';
import { cleanConfig, type JsonSchema, SchemaForm } from './schema-form';
import { DataTable, FieldsTable, Warnings } from './table';
import { failureWords } from './words';

/** A source's settings as the add and edit forms hold them, and the live check of an unsaved config. */

export interface Draft {
  name: string;
  config: Config;
  /** Minutes between fetches as typed ('' = the provider's default). */
  refreshMin: string;
  /** '' = the server's default zone. */
  timeZone: string;
}

export const draftOf = (s: DataSource): Draft => ({
  name: s.name,
  config: s.config as Config,
  refreshMin: s.refreshIntervalSec ? String(s.refreshIntervalSec / 60) : '',
  timeZone: s.timeZone,
});

/** The body fields of a create or PATCH from a draft. */
export function bodyOf(provider: Provider, d: Draft) {
  const minutes = Number(d.refreshMin);
  return {
    name: d.name.trim(),
    config: (cleanConfig(d.config) ?? {}) as Config,
    ...(provider.refresh && d.refreshMin.trim() !== '' && Number.isFinite(minutes) ? { refreshIntervalSec: Math.round(minutes * 60) } : {}),
    ...(d.timeZone ? { timeZone: d.timeZone } : {}),
  };
}

export function SettingsFields({
  provider,
  draft,
  onChange,
  error,
  disabled = false,
}: {
  provider: Provider;
  draft: Draft;
  onChange: (d: Draft) => void;
  error?: unknown;
  disabled?: boolean;
}) {
  const at = (field: string) => (error instanceof ApiError ? error.messageAt([field]) : undefined);
  const r = provider.refresh;
  return (
    <>
      <Field label="Name" error={at('name')} help="How people find it in Placard (widgets, lists).">
        {(f) => (
          <input {...f} required maxLength={200} disabled={disabled} value={draft.name} onInput={(e) => onChange({ ...draft, name: e.currentTarget.value })} />
        )}
      </Field>
      <SchemaForm
        schema={provider.configSchema as JsonSchema}
        value={draft.config}
        onChange={(config) => onChange({ ...draft, config })}
        secretPaths={provider.secretPaths}
        error={error}
        disabled={disabled}
      />
      <div class="grid">
        {r && (
          <Field
            label="Fetch every (minutes)"
            error={at('refreshIntervalSec')}
            help={`From ${r.minSec / 60} minute${r.minSec === 60 ? '' : 's'} to ${r.maxSec / 3600} hours; blank: every ${r.defaultSec / 60} minutes.`}
          >
            {(f) => (
              <input
                {...f}
                type="number"
                min={r.minSec / 60}
                max={r.maxSec / 60}
                step="any"
                disabled={disabled}
                placeholder={String(r.defaultSec / 60)}
                value={draft.refreshMin}
                onInput={(e) => onChange({ ...draft, refreshMin: e.currentTarget.value })}
              />
            )}
          </Field>
        )}
        <Field label="Time zone of the data" error={at('timeZone')} help="Dates without a zone, and “today” in views, are read in it.">
          {(f) => (
            <select {...f} disabled={disabled} value={draft.timeZone} onChange={(e) => onChange({ ...draft, timeZone: e.currentTarget.value })}>
              <option value="">The server’s time zone</option>
              {TIME_ZONES.map((z) => (
                <option key={z} value={z}>
                  {z}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
    </>
  );
}

/** The config has every required top-level field (a fetch can be tried). */
function ready(provider: Provider, config: Json | undefined): boolean {
  const required = (provider.configSchema as JsonSchema).required ?? [];
  const c = (config ?? {}) as Record<string, Json>;
  return required.every((k) => c[k] !== undefined);
}

export interface ProbeState {
  preview: Preview | null;
  inspect: Inspect | null;
  error: unknown;
  busy: boolean;
  run: () => Promise<void>;
}

/**
 * Runs preview and inspect of an unsaved config (nothing is stored), again 0.8 s after each
 * change while the config has its required fields. `sourceId` lends that source's stored
 * secrets to `{"set": true}` (editing it).
 */
export function useProbe(provider: Provider | undefined, draft: Draft, sourceId?: string): ProbeState {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [inspect, setInspect] = useState<Inspect | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);
  const config = cleanConfig(draft.config) ?? {};
  const key = JSON.stringify([provider?.id, config, draft.timeZone, sourceId]);
  const enabled = Boolean(provider?.fetches) && ready(provider!, config);
  const run = useCallback(async () => {
    if (!provider) return;
    const mine = ++seq.current;
    setBusy(true);
    const body = { config, ...(sourceId ? { sourceId } : {}), ...(draft.timeZone ? { timeZone: draft.timeZone } : {}) };
    try {
      const [p, i] = await Promise.all([
        api.post<Preview>(`data-sources/${provider.id}/preview`, { ...body, limit: 20 }),
        api.post<Inspect>(`data-sources/${provider.id}/inspect`, body),
      ]);
      if (mine !== seq.current) return;
      setPreview(p);
      setInspect(i);
      setError(null);
    } catch (err) {
      if (mine !== seq.current) return;
      setPreview(null);
      setInspect(null);
      setError(err);
    } finally {
      if (mine === seq.current) setBusy(false);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(() => {
    if (!enabled) return;
    const t = setTimeout(() => void run(), 800);
    return () => clearTimeout(t);
  }, [run, enabled]);
  return { preview, inspect, error, busy, run };
}

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** What the unsaved config gives now: the fetch in words, the fields found, the first rows. */
export function ProbeResults({ provider, probe }: { provider: Provider; probe: ProbeState }) {
  const { preview, inspect, error, busy } = probe;
  return (
    <section class="probe" aria-labelledby="probe-h" aria-busy={busy}>
      <div class="row spread">
        <h2 id="probe-h">What it gives now</h2>
        <button type="button" class="secondary outline small" disabled={busy} onClick={() => void probe.run()}>
          {busy ? 'Fetching…' : 'Fetch again'}
        </button>
      </div>
      {!preview && !error && !busy && (
        <p class="muted">Fill in the address: Placard fetches it and shows the fields and the first rows here (nothing is saved).</p>
      )}
      <ErrorNote error={error} />
      {preview?.error && (
        <p class="error-note" role="alert" data-testid="probe-error">
          {preview.attempt ? failureWords(provider.id, preview.attempt) : preview.error.message}.
        </p>
      )}
      {preview && !preview.error && (
        <p data-testid="probe-summary">
          {preview.rowCount} row{preview.rowCount === 1 ? '' : 's'}
          {preview.attempt ? ` from ${hostOf(preview.attempt.url)}, answered in ${preview.attempt.latencyMs} ms` : ''}.
          {preview.rowCount > preview.rows.length ? ` The first ${preview.rows.length} are shown.` : ''}
        </p>
      )}
      {preview && <Warnings warnings={preview.warnings} />}
      {inspect && inspect.fields.length > 0 && (
        <>
          <h3>Fields</h3>
          <FieldsTable inspect={inspect} />
        </>
      )}
      {preview && !preview.error && (
        <>
          <h3>First rows</h3>
          <DataTable columns={preview.columns} rows={preview.rows} label="Preview of the first rows" testId="probe-rows" />
        </>
      )}
    </section>
  );
}
