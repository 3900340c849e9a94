import { useState } from 'preact/hooks';
import { api, atLeast, type Page } from '../api';
import type { Asset } from '../types';
import { ErrorNote, formatTime, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';
import { type Targets, TargetPicker } from '../ui/targets';
import { type Lists, loadLists } from './campaigns/model';

/**
 * Takeovers (everything on the chosen screens, now, above every other source) and
 * presentation overrides (the quiet, local version): docs/takeovers.md.
 */

type Severity = 'info' | 'warning' | 'emergency';
type ContentType = 'playlist' | 'layout' | 'asset' | 'widget';
export interface Temporary {
  id: string;
  state: string;
  content: { type: string; id: string } | null;
  message: { text: string; severity: Severity } | null;
  targets: Targets;
  reason: string;
  startedAt: string;
  startsAt?: string;
  endsAt: string | null;
  endedAt: string | null;
  endReason: string | null;
  createdBy: { userId: string | null; label: string };
  origin: { kind: string; id: string; ruleId: string | null } | null;
}

const SEVERITY_LABEL: Record<Severity, string> = { info: 'Information', warning: 'Warning', emergency: 'Emergency' };
const TYPE_LABEL: Record<ContentType, string> = { playlist: 'Playlist', layout: 'Layout', asset: 'Media file', widget: 'Widget' };
const UNTIL: { value: string; label: string; minutes?: number }[] = [
  { value: 'open', label: 'Until I end it' },
  { value: '15', label: 'For 15 minutes', minutes: 15 },
  { value: '60', label: 'For 1 hour', minutes: 60 },
  { value: '240', label: 'For 4 hours', minutes: 240 },
  { value: 'at', label: 'Until a time…' },
];

interface Choices extends Lists {
  assets: Asset[];
}

async function loadChoices(): Promise<Choices> {
  const [lists, assets] = await Promise.all([loadLists(), api.get<Page<Asset>>('assets?limit=500')]);
  return { ...lists, assets: assets.items };
}

/** The screens a target set reaches, from the lists the page has (to name them before confirming). */
export function screensReached(lists: Lists, t: Targets): { id: string; name: string }[] {
  if (t.all) return lists.screens.map((s) => ({ id: s.id, name: s.name }));
  const groups = new Set(t.groupIds ?? []);
  const locations = new Set(t.locationIds ?? []);
  const screens = new Set(t.screenIds ?? []);
  return lists.screens
    .filter((s) => screens.has(s.id) || (s.locationId && locations.has(s.locationId)) || (s.groupIds ?? []).some((g) => groups.has(g)))
    .map((s) => ({ id: s.id, name: s.name }));
}

function describeContent(x: Temporary, choices: Choices | undefined): string {
  if (x.message) return `${SEVERITY_LABEL[x.message.severity] ?? x.message.severity}: “${x.message.text}”`;
  if (!x.content) return '—';
  const type = x.content.type as ContentType;
  const pool: { id: string; name: string }[] | undefined =
    type === 'playlist'
      ? choices?.playlists
      : type === 'layout'
        ? choices?.layouts
        : type === 'widget'
          ? choices?.widgets
          : type === 'asset'
            ? choices?.assets
            : undefined;
  const name = pool?.find((i) => i.id === x.content?.id)?.name ?? x.content.id;
  return `${TYPE_LABEL[type] ?? type} “${name}”`;
}

function describeTargets(t: Targets, choices: Choices | undefined): string {
  if (t.all) return 'Every screen';
  const names = (ids: string[] | undefined, pool: { id: string; name: string }[] | undefined, prefix: string) =>
    (ids ?? []).map((id) => `${prefix}${pool?.find((i) => i.id === id)?.name ?? id}`);
  const parts = [
    ...names(t.screenIds, choices?.screens, ''),
    ...names(t.groupIds, choices?.groups, 'Group '),
    ...names(t.locationIds, choices?.locations, 'Location '),
  ];
  return parts.join(', ') || '—';
}

/** What to show and where: shared by the takeover and override forms. */
function ContentAndTargets({ choices, allowAll, value, onChange }: { choices: Choices; allowAll: boolean; value: Draft; onChange: (d: Draft) => void }) {
  const pool: { id: string; name: string }[] =
    value.contentType === 'playlist'
      ? choices.playlists
      : value.contentType === 'layout'
        ? choices.layouts
        : value.contentType === 'widget'
          ? choices.widgets
          : choices.assets;
  return (
    <>
      <fieldset>
        <legend>What to show</legend>
        <label>
          <input type="radio" name="kind" checked={value.kind === 'message'} onChange={() => onChange({ ...value, kind: 'message' })} /> A message
        </label>
        <label>
          <input type="radio" name="kind" checked={value.kind === 'content'} onChange={() => onChange({ ...value, kind: 'content' })} /> Content from the
          library
        </label>
        {value.kind === 'message' ? (
          <div class="grid">
            <label>
              Message
              <textarea
                name="text"
                aria-required="true"
                maxLength={500}
                rows={3}
                value={value.text}
                placeholder="e.g. Please leave the building by the nearest exit."
                onInput={(e) => onChange({ ...value, text: e.currentTarget.value })}
              />
            </label>
            <label>
              Style
              <select value={value.severity} onChange={(e) => onChange({ ...value, severity: e.currentTarget.value as Severity })}>
                {(Object.keys(SEVERITY_LABEL) as Severity[]).map((s) => (
                  <option key={s} value={s}>
                    {SEVERITY_LABEL[s]}
                  </option>
                ))}
              </select>
            </label>
          </div>
        ) : (
          <div class="grid">
            <label>
              Kind
              <select value={value.contentType} onChange={(e) => onChange({ ...value, contentType: e.currentTarget.value as ContentType, contentId: '' })}>
                {(Object.keys(TYPE_LABEL) as ContentType[]).map((t) => (
                  <option key={t} value={t}>
                    {TYPE_LABEL[t]}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Shows
              <select aria-required="true" value={value.contentId} onChange={(e) => onChange({ ...value, contentId: e.currentTarget.value })}>
                <option value="">Choose…</option>
                {pool.map((i) => (
                  <option key={i.id} value={i.id}>
                    {i.name}
                  </option>
                ))}
              </select>
            </label>
          </div>
        )}
      </fieldset>
      <TargetPicker legend="Where" allowAll={allowAll} lists={choices} value={value.targets} onChange={(targets) => onChange({ ...value, targets })} />
    </>
  );
}

interface Draft {
  kind: 'message' | 'content';
  text: string;
  severity: Severity;
  contentType: ContentType;
  contentId: string;
  targets: Targets;
  until: string;
  untilAt: string;
  reason: string;
  forceAudio: boolean;
}

const EMPTY: Draft = {
  kind: 'message',
  text: '',
  severity: 'emergency',
  contentType: 'playlist',
  contentId: '',
  targets: {},
  until: 'open',
  untilAt: '',
  reason: '',
  forceAudio: false,
};

/** The body both routes take, from the form (null fields left out), or a sentence saying what is missing. */
function bodyOf(d: Draft, needsEnd: boolean): { body: Record<string, unknown> } | { missing: string } {
  const body: Record<string, unknown> = {};
  if (d.kind === 'message') {
    if (!d.text.trim()) return { missing: 'Write the message to show.' };
    body.message = { text: d.text.trim(), severity: d.severity };
  } else {
    if (!d.contentId) return { missing: 'Choose what to show.' };
    body.content = { type: d.contentType, id: d.contentId };
  }
  const t = d.targets;
  if (!t.all && !(t.screenIds?.length || t.groupIds?.length || t.locationIds?.length)) return { missing: 'Choose where to show it.' };
  body.targets = t.all ? { all: true } : { screenIds: t.screenIds ?? [], groupIds: t.groupIds ?? [], locationIds: t.locationIds ?? [] };
  const option = UNTIL.find((u) => u.value === d.until);
  if (option?.minutes) body.endsAt = new Date(Date.now() + option.minutes * 60_000).toISOString();
  else if (d.until === 'at') {
    const at = new Date(d.untilAt);
    if (!d.untilAt || Number.isNaN(at.getTime())) return { missing: 'Choose when it ends.' };
    body.endsAt = at.toISOString();
  } else if (needsEnd) return { missing: 'Choose when it ends.' };
  return { body };
}

function EndsField({ value, onChange, open }: { value: Draft; onChange: (d: Draft) => void; open: boolean }) {
  return (
    <div class="grid">
      <label>
        Ends
        <select value={value.until} onChange={(e) => onChange({ ...value, until: e.currentTarget.value })}>
          {UNTIL.filter((u) => open || u.value !== 'open').map((u) => (
            <option key={u.value} value={u.value}>
              {u.label}
            </option>
          ))}
        </select>
      </label>
      {value.until === 'at' && (
        <label>
          Ends at
          <input type="datetime-local" required value={value.untilAt} onInput={(e) => onChange({ ...value, untilAt: e.currentTarget.value })} />
        </label>
      )}
    </div>
  );
}

export function TakeoversPage() {
  useTitle('Takeovers');
  const { user } = useSession();
  const canTakeOver = atLeast(user, 'publisher');
  const canOverride = atLeast(user, 'editor');
  const takeovers = useLoad(() => api.get<Page<Temporary>>('takeovers?limit=100'));
  const overrides = useLoad(() => api.get<Page<Temporary>>('presentation-overrides?limit=100'));
  const choices = useLoad(loadChoices);
  const [form, setForm] = useState<Draft | null>(null);
  const [overrideForm, setOverrideForm] = useState<Draft | null>(null);
  const [missing, setMissing] = useState('');

  const start = useAction(async (d: Draft) => {
    const built = bodyOf(d, false);
    if ('missing' in built) return setMissing(built.missing);
    setMissing('');
    if (!d.reason.trim()) return setMissing('Say why (it is kept in the audit log).');
    const reached = choices.data ? screensReached(choices.data, d.targets) : [];
    const yes = await confirmAction({
      title: d.targets.all ? 'Take over every screen now?' : `Take over ${reached.length} screen${reached.length === 1 ? '' : 's'} now?`,
      body: (
        <>
          <p>
            They stop what they play and show {d.kind === 'message' ? `the ${SEVERITY_LABEL[d.severity].toLowerCase()} message` : 'the chosen content'}{' '}
            {d.until === 'open' ? 'until you end the takeover' : 'until it ends'}. Connected screens switch within a second.
          </p>
          {d.kind === 'message' && <blockquote>{d.text}</blockquote>}
        </>
      ),
      screens: reached,
      screensLabel: 'These screens switch to it:',
      confirmLabel: 'Take over now',
      danger: true,
    });
    if (!yes) return;
    await api.post<Temporary>('takeovers', { ...built.body, reason: d.reason.trim(), ...(d.forceAudio ? { audio: 'force-on' } : {}) });
    showToast('Takeover started.');
    setForm(null);
    await takeovers.reload();
  });
  const cancel = useAction(async (x: Temporary) => {
    const yes = await confirmAction({
      title: 'End this takeover?',
      body: <p>Screens go back to what they would play without it ({describeContent(x, choices.data)}).</p>,
      confirmLabel: 'End takeover',
    });
    if (!yes) return;
    await api.post(`takeovers/${x.id}/cancel`, { reason: 'Ended in the console' });
    showToast('Takeover ended.');
    await takeovers.reload();
  });
  const startOverride = useAction(async (d: Draft) => {
    const built = bodyOf(d, true);
    if ('missing' in built) return setMissing(built.missing);
    setMissing('');
    await api.post<Temporary>('presentation-overrides', { ...built.body, ...(d.reason.trim() ? { reason: d.reason.trim() } : {}) });
    showToast('Override started.');
    setOverrideForm(null);
    await overrides.reload();
  });
  const stop = useAction(async (x: Temporary) => {
    await api.post(`presentation-overrides/${x.id}/stop`, {});
    showToast('Override stopped.');
    await overrides.reload();
  });

  const active = (takeovers.data?.items ?? []).filter((x) => x.state === 'active');
  const past = (takeovers.data?.items ?? []).filter((x) => x.state !== 'active');
  const activeOverrides = (overrides.data?.items ?? []).filter((x) => x.state === 'active' || x.state === 'scheduled');
  return (
    <>
      <hgroup>
        <h1>Takeovers</h1>
        <p>Put a message or content on screens now, above every schedule; or, quietly, show something else on a few screens for a while.</p>
      </hgroup>
      <ErrorNote error={takeovers.error ?? choices.error} />
      {active.length > 0 && (
        <section class="takeovers-active" aria-label="Active takeovers" data-testid="active-takeovers">
          {active.map((x) => (
            <article key={x.id} class={`takeover-card ${x.message?.severity ?? 'warning'}`} data-takeover={x.id}>
              <header>
                <strong>On air: {describeContent(x, choices.data)}</strong>
              </header>
              <p>
                {describeTargets(x.targets, choices.data)} · since {formatTime(x.startedAt)} · {x.endsAt ? `ends ${formatTime(x.endsAt)}` : 'until ended'} ·
                started by {x.origin?.kind === 'weather-alert' ? 'a weather alert rule' : x.createdBy.label}
                {x.reason ? `: ${x.reason}` : ''}
              </p>
              {canTakeOver && (
                <button type="button" class="secondary" onClick={() => void cancel.run(x)}>
                  End takeover
                </button>
              )}
            </article>
          ))}
          <ErrorNote error={cancel.error} />
        </section>
      )}
      {canTakeOver && !form && (
        <button type="button" class="danger takeover-button" onClick={() => setForm({ ...EMPTY, targets: { all: true } })}>
          Take over screens
        </button>
      )}
      {!canTakeOver && <p class="muted">Taking over screens needs the publisher role.</p>}
      {form && choices.data && (
        <form
          class="takeover-form"
          aria-label="Take over screens"
          onSubmit={(e) => {
            e.preventDefault();
            void start.run(form);
          }}
        >
          <h2>Take over screens</h2>
          <ContentAndTargets choices={choices.data} allowAll value={form} onChange={setForm} />
          <EndsField value={form} onChange={setForm} open />
          <label>
            Why
            <input
              aria-required="true"
              maxLength={500}
              value={form.reason}
              placeholder="e.g. Fire drill"
              onInput={(e) => setForm({ ...form, reason: e.currentTarget.value })}
            />
          </label>
          <label>
            <input type="checkbox" checked={form.forceAudio} onChange={(e) => setForm({ ...form, forceAudio: e.currentTarget.checked })} /> Force sound on
          </label>
          {missing && (
            <p class="field-error" role="alert">
              {missing}
            </p>
          )}
          <ErrorNote error={start.error} />
          <div class="row">
            <button type="submit" class="danger" aria-busy={start.busy}>
              Review and take over
            </button>
            <button type="button" class="secondary outline" onClick={() => setForm(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <h2>Presentation overrides</h2>
      <p class="muted">A screen or group shows something else for a while (a private event in the back room), then goes back to its schedule.</p>
      <ErrorNote error={overrides.error ?? stop.error} />
      {activeOverrides.length > 0 && (
        <div class="table-wrap">
          <table class="striped" data-testid="overrides">
            <thead>
              <tr>
                <th scope="col">Shows</th>
                <th scope="col">Where</th>
                <th scope="col">Until</th>
                {canOverride && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {activeOverrides.map((x) => (
                <tr key={x.id} data-override={x.id}>
                  <td>{describeContent(x, choices.data)}</td>
                  <td>{describeTargets(x.targets, choices.data)}</td>
                  <td>{x.endsAt ? formatTime(x.endsAt) : '—'}</td>
                  {canOverride && (
                    <td class="actions">
                      <button type="button" class="secondary outline small" onClick={() => void stop.run(x)}>
                        Stop
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {overrides.data && activeOverrides.length === 0 && <p class="muted">No override is running.</p>}
      {canOverride && !overrideForm && (
        <button type="button" class="secondary" onClick={() => setOverrideForm({ ...EMPTY, kind: 'content', until: '60' })}>
          Override screens for a while
        </button>
      )}
      {overrideForm && choices.data && (
        <form
          aria-label="Override screens"
          onSubmit={(e) => {
            e.preventDefault();
            void startOverride.run(overrideForm);
          }}
        >
          <ContentAndTargets choices={choices.data} allowAll={false} value={overrideForm} onChange={setOverrideForm} />
          <EndsField value={overrideForm} onChange={setOverrideForm} open={false} />
          <label>
            Note
            <input
              maxLength={500}
              value={overrideForm.reason}
              placeholder="optional"
              onInput={(e) => setOverrideForm({ ...overrideForm, reason: e.currentTarget.value })}
            />
          </label>
          {missing && (
            <p class="field-error" role="alert">
              {missing}
            </p>
          )}
          <ErrorNote error={startOverride.error} />
          <div class="row">
            <button type="submit" aria-busy={startOverride.busy}>
              Start override
            </button>
            <button type="button" class="secondary outline" onClick={() => setOverrideForm(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {past.length > 0 && (
        <>
          <h2>Recent takeovers</h2>
          <div class="table-wrap">
            <table class="striped" data-testid="past-takeovers">
              <thead>
                <tr>
                  <th scope="col">Showed</th>
                  <th scope="col">Where</th>
                  <th scope="col">From</th>
                  <th scope="col">Ended</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {past.map((x) => (
                  <tr key={x.id}>
                    <td>{describeContent(x, choices.data)}</td>
                    <td>{describeTargets(x.targets, choices.data)}</td>
                    <td>{formatTime(x.startedAt)}</td>
                    <td>
                      {formatTime(x.endedAt ?? x.endsAt)} ({x.state})
                    </td>
                    <td>
                      {x.reason || '—'}
                      {x.endReason ? ` (ended: ${x.endReason})` : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}
