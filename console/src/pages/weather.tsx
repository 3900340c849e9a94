import { useState } from 'preact/hooks';
import { api, atLeast } from '../api';
import type { components, operations } from '../api-schema';
import { ErrorNote, formatTime, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';
import { type Lists, loadLists } from './campaigns/model';
import { screensReached } from './takeovers';
import { TargetPicker } from '../ui/targets';

/**
 * Weather alerts (docs/weather-alerts.md, docs/console-weather.md): the feed monitor, the rules that turn
 * alerts into takeovers, and the alerts with what each did. Monitor: admin; rules, polls, confirmations: publisher.
 */

type Alert = components['schemas']['WeatherAlert'];
type Monitor = components['schemas']['WeatherMonitor'];
type Rule = components['schemas']['WeatherAlertRule'];
type Overview = operations['getAlertsWeather']['responses'][200]['content']['application/json']['data'];
type Zones = operations['getAlertsWeatherZones']['responses'][200]['content']['application/json']['data'];
type Polled = operations['postAlertsWeatherPoll']['responses'][200]['content']['application/json']['data'];
type Format = Monitor['format'];
type Targets = Rule['targets'];

const SEVERITIES = ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown'];
const URGENCIES = ['Immediate', 'Expected', 'Future', 'Past', 'Unknown'];
const CERTAINTIES = ['Observed', 'Likely', 'Possible', 'Unlikely', 'Unknown'];
const FORMAT_LABEL: Record<Format, string> = { 'nws-geojson': 'NWS GeoJSON (api.weather.gov)', 'cap-atom': 'CAP Atom feed (MeteoAlarm, NWS…)' };
const STATE_LABEL: Record<Alert['state'], string> = {
  active: 'Active',
  expired: 'Expired',
  cancelled: 'Cancelled',
  superseded: 'Replaced by an update',
  cancel: 'Cancel message',
};
const OUTCOME_LABEL: Record<Polled['outcome'], string> = {
  data: 'The feed answered with a new document.',
  unchanged: 'The feed has not changed since the last poll.',
  failed: 'The poll failed; nothing changed.',
  disabled: 'The monitor is off: nothing was fetched.',
  not_configured: 'No feed is set up yet: nothing was fetched.',
  skipped: 'Another poll was running: nothing was fetched.',
  not_polled: 'Decision saved.',
};

/** Splits a typed list (commas or new lines) into trimmed, non-empty, distinct values. */
const splitList = (s: string) => [
  ...new Set(
    s
      .split(/[,\n]/)
      .map((x) => x.trim())
      .filter(Boolean),
  ),
];

/** What a poll changed, in words. */
export function describePoll(p: Polled): string {
  const parts = [OUTCOME_LABEL[p.outcome] ?? p.outcome];
  if (p.error) parts.push(`Error: ${p.error}`);
  const c = p.changes;
  const count = (kind: string) => c.alerts.filter((a) => a.change === kind).length;
  const bits = [
    count('new') && `${count('new')} new alert${count('new') === 1 ? '' : 's'}`,
    count('updated') && `${count('updated')} updated`,
    count('cancelled') && `${count('cancelled')} cancelled`,
    count('expired') && `${count('expired')} expired`,
    count('superseded') && `${count('superseded')} replaced`,
    c.started.length && `${c.started.length} takeover${c.started.length === 1 ? '' : 's'} started`,
    c.ended.length && `${c.ended.length} takeover${c.ended.length === 1 ? '' : 's'} ended`,
    c.pendingConfirmation.length && `${c.pendingConfirmation.length} waiting for confirmation`,
    c.failed.length && `${c.failed.length} could not start (${c.failed.map((f) => f.error).join('; ')})`,
  ].filter(Boolean);
  if (bits.length) parts.push(`${bits.join(', ')}.`);
  else if (p.outcome === 'data') parts.push('No alert changed.');
  return parts.join(' ');
}

export function WeatherPage() {
  useTitle('Weather alerts');
  const { user } = useSession();
  const isAdmin = atLeast(user, 'admin');
  const isPublisher = atLeast(user, 'publisher');
  const overview = useLoad(() => api.get<Overview>('alerts/weather'));
  const lists = useLoad(loadLists);
  const [pollSaid, setPollSaid] = useState('');

  const pollNow = useAction(async () => {
    const r = await api.post<Polled>('alerts/weather/poll', { fetch: true });
    setPollSaid(describePoll(r));
    await overview.reload();
  });
  const decide = useAction(async (a: Alert, ruleId: string, how: 'confirm' | 'dismiss') => {
    const rule = overview.data?.rules.find((r) => r.id === ruleId);
    if (how === 'confirm') {
      const reached = rule && lists.data ? screensReached(lists.data, rule.targets) : [];
      const yes = await confirmAction({
        title: rule?.targets.all ? 'Take over every screen now?' : `Take over ${reached.length} screen${reached.length === 1 ? '' : 's'} now?`,
        body: (
          <>
            <p>They stop what they play and show this weather alert until it ends ({formatTime(a.ends ?? a.expires)}).</p>
            <blockquote>{a.headline || a.event}</blockquote>
          </>
        ),
        screens: reached,
        screensLabel: 'These screens switch to it:',
        confirmLabel: 'Take over now',
        danger: true,
      });
      if (!yes) return;
    }
    const r = await api.post<Polled>('alerts/weather/poll', { fetch: false, [how]: [{ alertId: a.id, ruleId }] });
    showToast(
      how === 'confirm' ? (r.changes.failed.length ? describePoll(r) : 'The alert is on the screens now.') : 'Alert dismissed: it stays off the screens.',
    );
    await overview.reload();
  });

  const data = overview.data;
  const alerts = data?.alerts ?? [];
  const active = alerts.filter((a) => a.state === 'active');
  const recent = alerts.filter((a) => a.state !== 'active');
  const pending = alerts.flatMap((a) => a.actions.filter((x) => x.state === 'pending_confirmation').map((x) => ({ a, x })));
  return (
    <>
      <hgroup>
        <h1>Weather alerts</h1>
        <p>Official alerts from a feed take over the screens you choose, by rule; a rule can wait for a person to confirm.</p>
      </hgroup>
      <ErrorNote error={overview.error ?? lists.error} />
      {pending.length > 0 && (
        <section class="weather-pending" aria-label="Waiting for confirmation" data-testid="pending">
          <h2>Waiting for confirmation</h2>
          {pending.map(({ a, x }) => (
            <article key={`${a.id}-${x.ruleId}`} class={`takeover-card ${severityClass(a.severity)}`} data-pending={a.event}>
              <header>
                <strong>{a.headline || a.event}</strong>
              </header>
              <p>
                {a.severity} · {a.areaDesc || a.zones.join(', ')} · until {formatTime(a.ends ?? a.expires)} · rule “{x.ruleName}”
              </p>
              {isPublisher ? (
                <div class="row weather-decide">
                  <button type="button" class="danger" aria-busy={decide.busy} onClick={() => void decide.run(a, x.ruleId, 'confirm')}>
                    Confirm: take over screens
                  </button>
                  <button type="button" class="secondary outline" onClick={() => void decide.run(a, x.ruleId, 'dismiss')}>
                    Dismiss
                  </button>
                </div>
              ) : (
                <p class="muted">A publisher confirms or dismisses it.</p>
              )}
            </article>
          ))}
          <ErrorNote error={decide.error} />
        </section>
      )}
      {data && (
        <MonitorCard
          monitor={data.monitor}
          canEdit={isAdmin}
          canPoll={isPublisher}
          onSaved={overview.reload}
          poll={() => void pollNow.run()}
          pollBusy={pollNow.busy}
          pollSaid={pollSaid}
          pollError={pollNow.error}
        />
      )}
      <h2>Alerts</h2>
      {data && alerts.length === 0 && <p class="muted">No alert in the last 7 days.</p>}
      {active.length > 0 && <AlertTable label="Active alerts" alerts={active} testid="active-alerts" />}
      {recent.length > 0 && (
        <>
          <h3>Recent</h3>
          <AlertTable label="Recent alerts" alerts={recent} testid="recent-alerts" />
        </>
      )}
      {data && lists.data && <Rules rules={data.rules} lists={lists.data} canEdit={isPublisher} onChanged={overview.reload} />}
    </>
  );
}

const severityClass = (s: string) => (s === 'Extreme' || s === 'Severe' ? 'emergency' : s === 'Moderate' ? 'warning' : 'info');

function actionWords(x: Alert['actions'][number]): string {
  switch (x.state) {
    case 'pending_confirmation':
      return 'waiting for confirmation';
    case 'starting':
      return 'starting a takeover';
    case 'active':
      return x.confirmedBy ? `on the screens (confirmed by ${x.confirmedBy})` : 'on the screens';
    case 'ended':
      return `took over screens; ended${x.endReason ? `: ${x.endReason}` : ''}`;
    case 'dismissed':
      return `dismissed${x.confirmedBy ? ` by ${x.confirmedBy}` : ''}`;
    case 'failed':
      return `could not start: ${x.error ?? 'unknown error'}`;
    default:
      return x.state;
  }
}

function AlertTable({ label, alerts, testid }: { label: string; alerts: Alert[]; testid: string }) {
  return (
    <div class="table-wrap">
      <table class="striped weather-alerts" aria-label={label} data-testid={testid}>
        <thead>
          <tr>
            <th scope="col">Alert</th>
            <th scope="col">Severity</th>
            <th scope="col">Area</th>
            <th scope="col">Until</th>
            <th scope="col">Issued by</th>
            <th scope="col">What it did</th>
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <tr key={a.id} data-alert={a.event}>
              <td>
                <strong>{a.headline || a.event}</strong>
                {a.state !== 'active' && <small class="muted"> ({STATE_LABEL[a.state] ?? a.state})</small>}
              </td>
              <td>
                <span class={`badge ${severityClass(a.severity) === 'emergency' ? 'bad' : severityClass(a.severity) === 'warning' ? 'warn' : 'ok'}`}>
                  {a.severity}
                </span>
              </td>
              <td data-label="Area">{a.areaDesc || a.zones.join(', ') || '—'}</td>
              <td data-label="Until">{formatTime(a.endedAt ?? a.ends ?? a.expires)}</td>
              <td data-label="Issued by">{a.senderName || a.sender || '—'}</td>
              <td data-label="What it did">
                {a.actions.length === 0
                  ? 'No rule matched'
                  : a.actions.map((x) => (
                      <div key={x.ruleId}>
                        {x.ruleName}: {actionWords(x)}
                        {x.takeoverId && (x.state === 'active' || x.state === 'ended') && (
                          <>
                            {' '}
                            <a href="/takeovers">See takeovers</a>
                          </>
                        )}
                      </div>
                    ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface MonitorDraft {
  enabled: boolean;
  feedUrl: string;
  format: Format;
  zones: string;
  pollIntervalSec: string;
}

function MonitorCard(props: {
  monitor: Monitor | null;
  canEdit: boolean;
  canPoll: boolean;
  onSaved: () => Promise<void>;
  poll: () => void;
  pollBusy: boolean;
  pollSaid: string;
  pollError: unknown;
}) {
  const m = props.monitor;
  const zones = useLoad(() => api.get<Zones>('alerts/weather/zones'), [m?.state.lastSuccessAt, m?.feedUrl]);
  const [draft, setDraft] = useState<MonitorDraft>({
    enabled: m?.enabled ?? true,
    feedUrl: m?.feedUrl ?? '',
    format: m?.format ?? 'nws-geojson',
    zones: (m?.zones ?? []).join(', '),
    pollIntervalSec: String(m?.pollIntervalSec ?? 120),
  });
  const save = useAction(async (d: MonitorDraft) => {
    await api.put<Monitor>('alerts/weather/monitor', {
      enabled: d.enabled,
      feedUrl: d.feedUrl.trim(),
      format: d.format,
      zones: splitList(d.zones),
      pollIntervalSec: Number(d.pollIntervalSec),
    });
    showToast('Monitor saved.');
    await props.onSaved();
  });
  const chosen = new Set(splitList(draft.zones));
  const toggleZone = (code: string, on: boolean) => {
    const now = splitList(draft.zones).filter((z) => z !== code);
    setDraft({ ...draft, zones: (on ? [...now, code] : now).join(', ') });
  };
  const s = m?.state;
  const offered = zones.data?.zones ?? [];
  return (
    <article aria-labelledby="monitor-h" class="weather-monitor">
      <header>
        <h2 id="monitor-h">Feed monitor</h2>
      </header>
      {m ? (
        <dl class="weather-state" data-testid="monitor-state">
          <dt>State</dt>
          <dd>{m.enabled ? 'On' : 'Off'}</dd>
          <dt>Last poll</dt>
          <dd>{formatTime(s?.lastPollAt)}</dd>
          <dt>Last success</dt>
          <dd>{formatTime(s?.lastSuccessAt)}</dd>
          <dt>Next poll</dt>
          <dd>{m.enabled ? formatTime(s?.nextPollAt) : '—'}</dd>
          {s?.lastError && (
            <>
              <dt>Last error</dt>
              <dd class="field-error" data-testid="monitor-error">
                {s.lastError}
                {s.consecutiveFailures > 1 ? ` (${s.consecutiveFailures} failures in a row)` : ''}
              </dd>
            </>
          )}
        </dl>
      ) : (
        <p class="muted">No feed is set up yet.</p>
      )}
      {props.canPoll && (
        <div class="row">
          <button type="button" class="secondary" aria-busy={props.pollBusy} onClick={props.poll} disabled={!m}>
            Poll now
          </button>
        </div>
      )}
      {props.pollSaid && (
        <p role="status" data-testid="poll-said">
          {props.pollSaid}
        </p>
      )}
      <ErrorNote error={props.pollError} />
      {props.canEdit ? (
        <form
          aria-label="Feed monitor"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(draft);
          }}
        >
          <label>
            <input type="checkbox" role="switch" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} /> Watch the
            feed
          </label>
          <div class="grid">
            <label>
              Feed address
              <input
                type="url"
                required
                value={draft.feedUrl}
                placeholder="https://api.weather.gov/alerts/active?area=KS"
                onInput={(e) => setDraft({ ...draft, feedUrl: e.currentTarget.value })}
              />
            </label>
            <label>
              Format
              <select value={draft.format} onChange={(e) => setDraft({ ...draft, format: e.currentTarget.value as Format })}>
                {(Object.keys(FORMAT_LABEL) as Format[]).map((f) => (
                  <option key={f} value={f}>
                    {FORMAT_LABEL[f]}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Poll every (seconds)
              <input
                type="number"
                min={30}
                max={86400}
                required
                value={draft.pollIntervalSec}
                onInput={(e) => setDraft({ ...draft, pollIntervalSec: e.currentTarget.value })}
              />
            </label>
          </div>
          <label>
            Zones watched
            <input
              value={draft.zones}
              placeholder="e.g. KSZ055, 020173 (empty: every alert in the feed)"
              aria-describedby="zones-help"
              onInput={(e) => setDraft({ ...draft, zones: e.currentTarget.value })}
            />
            <small id="zones-help">Zone codes separated by commas; or tick them below once the feed has been read.</small>
          </label>
          {offered.length > 0 && (
            <fieldset class="zone-picks" data-testid="zone-picks">
              <legend>Zones the feed offers (as of {formatTime(zones.data?.asOf)})</legend>
              {offered.map((z) => (
                <label key={`${z.kind}-${z.code}`}>
                  <input type="checkbox" checked={chosen.has(z.code)} onChange={(e) => toggleZone(z.code, e.currentTarget.checked)} />{' '}
                  <span>
                    {z.code}{' '}
                    <small class="muted">
                      {z.areaDesc} ({z.kind})
                    </small>
                  </span>
                </label>
              ))}
            </fieldset>
          )}
          <ErrorNote error={save.error} />
          <button type="submit" aria-busy={save.busy}>
            Save monitor
          </button>
        </form>
      ) : (
        m && (
          <p>
            {FORMAT_LABEL[m.format]} at <code>{m.feedUrl}</code>, every {m.pollIntervalSec} s; zones: {m.zones.join(', ') || 'all'}.{' '}
            <small class="muted">Only an admin changes the monitor.</small>
          </p>
        )
      )}
    </article>
  );
}

interface RuleDraft {
  id?: string;
  name: string;
  events: string;
  severities: string[];
  urgencies: string[];
  certainties: string[];
  zones: string;
  targets: Targets;
  requireConfirmation: boolean;
}

const NEW_RULE: RuleDraft = {
  name: '',
  events: '',
  severities: ['Extreme', 'Severe'],
  urgencies: [],
  certainties: [],
  zones: '',
  targets: { all: true },
  requireConfirmation: true,
};

function draftOf(r: Rule): RuleDraft {
  return {
    id: r.id,
    name: r.name,
    events: (r.match.events ?? []).join(', '),
    severities: r.match.severities ?? [],
    urgencies: r.match.urgencies ?? [],
    certainties: r.match.certainties ?? [],
    zones: (r.match.zones ?? []).join(', '),
    targets: r.targets,
    requireConfirmation: r.requireConfirmation,
  };
}

function ruleBody(d: RuleDraft) {
  const match: Record<string, string[]> = {};
  const events = splitList(d.events);
  const zones = splitList(d.zones);
  if (events.length) match.events = events;
  if (d.severities.length) match.severities = d.severities;
  if (d.urgencies.length) match.urgencies = d.urgencies;
  if (d.certainties.length) match.certainties = d.certainties;
  if (zones.length) match.zones = zones;
  const t = d.targets;
  const targets = t.all ? { all: true } : { screenIds: t.screenIds ?? [], groupIds: t.groupIds ?? [], locationIds: t.locationIds ?? [] };
  return { name: d.name, match, targets, requireConfirmation: d.requireConfirmation };
}

function describeMatch(r: Rule): string {
  const m = r.match;
  const parts = [
    m.events?.length && `events ${m.events.join(', ')}`,
    m.severities?.length && `severity ${m.severities.join(' or ')}`,
    m.urgencies?.length && `urgency ${m.urgencies.join(' or ')}`,
    m.certainties?.length && `certainty ${m.certainties.join(' or ')}`,
    m.zones?.length && `zones ${m.zones.join(', ')}`,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'every alert';
}

function describeTargets(t: Targets, lists: Lists): string {
  if (t.all) return 'Every screen';
  const names = (ids: string[] | undefined, pool: { id: string; name: string }[], prefix: string) =>
    (ids ?? []).map((id) => `${prefix}${pool.find((i) => i.id === id)?.name ?? id}`);
  return (
    [...names(t.screenIds, lists.screens, ''), ...names(t.groupIds, lists.groups, 'Group '), ...names(t.locationIds, lists.locations, 'Location ')].join(
      ', ',
    ) || '—'
  );
}

function Rules({ rules, lists, canEdit, onChanged }: { rules: Rule[]; lists: Lists; canEdit: boolean; onChanged: () => Promise<void> }) {
  const [form, setForm] = useState<RuleDraft | null>(null);
  const save = useAction(async (d: RuleDraft) => {
    const body = ruleBody(d);
    if (d.id) await api.put<Rule>(`alerts/weather/rules/${d.id}`, body);
    else await api.post<Rule>('alerts/weather/rules', body);
    showToast(d.id ? 'Rule saved.' : 'Rule added.');
    setForm(null);
    await onChanged();
  });
  const remove = useAction(async (r: Rule) => {
    const yes = await confirmAction({
      title: `Delete the rule “${r.name}”?`,
      body: <p>Takeovers it started end now, and alerts waiting for confirmation under it are dropped.</p>,
      confirmLabel: 'Delete rule',
      danger: true,
    });
    if (!yes) return;
    await api.del(`alerts/weather/rules/${r.id}`);
    showToast('Rule deleted.');
    await onChanged();
  });
  return (
    <>
      <h2>Rules</h2>
      <ErrorNote error={remove.error} />
      {rules.length === 0 && <p class="muted">No rule yet: alerts are listed but nothing goes on the screens.</p>}
      {rules.length > 0 && (
        <div class="table-wrap">
          <table class="striped" data-testid="rules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Matches</th>
                <th scope="col">Screens</th>
                <th scope="col">Confirmation</th>
                {canEdit && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id} data-rule={r.name}>
                  <td>{r.name}</td>
                  <td data-label="Matches">{describeMatch(r)}</td>
                  <td data-label="Screens">{describeTargets(r.targets, lists)}</td>
                  <td data-label="Confirmation">{r.requireConfirmation ? 'A person confirms' : 'Goes on air at once'}</td>
                  {canEdit && (
                    <td class="actions">
                      <button type="button" class="secondary outline small" aria-label={`Edit ${r.name}`} onClick={() => setForm(draftOf(r))}>
                        Edit
                      </button>
                      <button type="button" class="secondary outline small" aria-label={`Delete ${r.name}`} onClick={() => void remove.run(r)}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canEdit && !form && (
        <button type="button" class="secondary" onClick={() => setForm({ ...NEW_RULE })}>
          Add a rule
        </button>
      )}
      {form && (
        <form
          aria-label="Weather alert rule"
          class="weather-rule"
          onSubmit={(e) => {
            e.preventDefault();
            void save.run(form);
          }}
        >
          <h3>{form.id ? `Edit “${form.name}”` : 'New rule'}</h3>
          <label>
            Rule name
            <input value={form.name} maxLength={200} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} placeholder="e.g. Tornadoes" />
          </label>
          <fieldset>
            <legend>Which alerts (every field you fill must match; empty: any)</legend>
            <label>
              Events
              <input
                value={form.events}
                placeholder="e.g. Tornado Warning, Flash Flood Warning"
                onInput={(e) => setForm({ ...form, events: e.currentTarget.value })}
              />
            </label>
            <Choices label="Severity" all={SEVERITIES} value={form.severities} onChange={(v) => setForm({ ...form, severities: v })} />
            <Choices label="Urgency" all={URGENCIES} value={form.urgencies} onChange={(v) => setForm({ ...form, urgencies: v })} />
            <Choices label="Certainty" all={CERTAINTIES} value={form.certainties} onChange={(v) => setForm({ ...form, certainties: v })} />
            <label>
              Zones
              <input value={form.zones} placeholder="e.g. KSZ055 (empty: any zone)" onInput={(e) => setForm({ ...form, zones: e.currentTarget.value })} />
            </label>
          </fieldset>
          <TargetPicker
            legend="Which screens it takes over"
            allowAll
            lists={lists}
            value={form.targets}
            onChange={(targets) => setForm({ ...form, targets })}
          />
          <label>
            <input type="checkbox" checked={form.requireConfirmation} onChange={(e) => setForm({ ...form, requireConfirmation: e.currentTarget.checked })} /> A
            person confirms before it goes on the screens
          </label>
          <ErrorNote error={save.error} />
          <div class="row">
            <button type="submit" aria-busy={save.busy}>
              {form.id ? 'Save rule' : 'Add rule'}
            </button>
            <button type="button" class="secondary outline" onClick={() => setForm(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </>
  );
}

function Choices({ label, all, value, onChange }: { label: string; all: string[]; value: string[]; onChange: (v: string[]) => void }) {
  return (
    <fieldset class="target-picks" aria-label={label}>
      <legend>{label}</legend>
      {all.map((x) => (
        <label key={x}>
          <input
            type="checkbox"
            checked={value.includes(x)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...value, x] : value.filter((v) => v !== x))}
          />{' '}
          {x}
        </label>
      ))}
    </fieldset>
  );
}
