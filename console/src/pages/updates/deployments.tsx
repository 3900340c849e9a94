import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, type Page } from '../../api';
import type { Group, Location, Screen } from '../../types';
import { ErrorNote, formatTime, useAction, useLoad, useTitle } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { Field } from '../../ui/fields';
import { TargetPicker, type Targets } from '../../ui/targets';
import {
  DEFAULT_WAVES,
  type Deployment,
  DEPLOYMENT_STATE_LABEL,
  familyLabel,
  loadReleases,
  PAUSED_REASON_SHORT,
  type Release,
  tone,
  type WaveSpec,
  waveWords,
} from './model';
import { UpdatesNav } from './nav';
import './updates.css';

interface Choices {
  releases: Release[];
  screens: Screen[];
  groups: Group[];
  locations: Location[];
}

async function loadChoices(): Promise<Choices> {
  const [list, screens, groups, locations] = await Promise.all([
    loadReleases(),
    api.get<Page<Screen>>('screens?limit=500'),
    api.get<Page<Group>>('screen-groups?limit=500'),
    api.get<Page<Location>>('locations?limit=500'),
  ]);
  return { releases: list.releases.filter((r) => r.cached), screens: screens.items, groups: groups.items, locations: locations.items };
}

export const releaseWords = (r: { family: string; version: string; channel: string }) =>
  `${familyLabel(r.family)} ${r.version}${r.channel === 'beta' ? ' (beta)' : ''}`;

/** "3 of 10 installed, 1 failed, 2 skipped". */
export function countWords(d: Deployment): string {
  const c = d.counts;
  const eligible = c.total - c.skipped;
  const parts = [`${c.installed} of ${eligible} installed`];
  if (c.inProgress + c.offered > 0) parts.push(`${c.inProgress + c.offered} under way`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.cancelled) parts.push(`${c.cancelled} cancelled`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  return parts.join(', ');
}

/** Deployments: the list, and a new one (release, targets, waves, limits). */
export function DeploymentsPage() {
  useTitle('Deployments');
  const { query, route } = useLocation();
  const list = useLoad(() => api.get<Deployment[]>('update-deployments'));
  const [creating, setCreating] = useState(Boolean(query.release));
  return (
    <>
      <hgroup>
        <h1>Player updates</h1>
        <p>Player releases kept on this server, and deployments that roll them out to screens in waves.</p>
      </hgroup>
      <UpdatesNav current="deployments" />
      <ErrorNote error={list.error} />
      {!creating && (
        <button type="button" onClick={() => setCreating(true)}>
          New deployment
        </button>
      )}
      {creating && (
        <NewDeployment initialRelease={query.release ?? ''} onCancel={() => setCreating(false)} onCreated={(d) => route(`/updates/deployments/${d.id}`)} />
      )}
      <section aria-labelledby="deployments-h">
        <h2 id="deployments-h">Deployments</h2>
        {list.data && list.data.length === 0 && <p class="muted">No deployment yet.</p>}
        {list.data && list.data.length > 0 && (
          <div class="table-wrap">
            <table class="striped updates-table" data-testid="deployments">
              <thead>
                <tr>
                  <th scope="col">Release</th>
                  <th scope="col">State</th>
                  <th scope="col">Screens</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((d) => (
                  <tr key={d.id} data-deployment={d.id}>
                    <td data-label="Release">
                      <a href={`/updates/deployments/${d.id}`}>{releaseWords(d.release)}</a>
                    </td>
                    <td data-label="State">
                      <span class={`badge ${tone(d.state)}`}>{DEPLOYMENT_STATE_LABEL[d.state] ?? d.state}</span>
                      {d.state === 'paused' && d.pausedReason && <small class="muted"> {PAUSED_REASON_SHORT[d.pausedReason] ?? d.pausedReason}</small>}
                    </td>
                    <td data-label="Screens">{countWords(d)}</td>
                    <td data-label="Started">{formatTime(d.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

interface Draft {
  releaseId: string;
  targets: Targets;
  waves: { kind: 'screens' | 'percent'; value: string }[];
  waveWaitMin: string;
  failureThreshold: string;
  confirmTimeoutMin: string;
  windowOn: boolean;
  windowStart: string;
  windowEnd: string;
}

const toRows = (waves: WaveSpec[]) =>
  waves.map((w) => ('screens' in w ? { kind: 'screens' as const, value: String(w.screens) } : { kind: 'percent' as const, value: String(w.percent) }));

/** The body of POST /update-deployments from the form, or what is missing in words. */
function bodyOf(d: Draft): { body: Record<string, unknown> } | { missing: string } {
  if (!d.releaseId) return { missing: 'Choose the release to deploy.' };
  const t = d.targets;
  if (!t.all && !(t.screenIds?.length || t.groupIds?.length || t.locationIds?.length)) return { missing: 'Choose the screens to update.' };
  if (d.waves.length === 0) return { missing: 'Add at least one wave.' };
  const waves: WaveSpec[] = [];
  for (const [i, w] of d.waves.entries()) {
    const n = Number(w.value);
    if (!w.value.trim() || !Number.isInteger(n) || n < 1 || (w.kind === 'percent' && n > 100))
      return { missing: `Wave ${i + 1}: ${w.kind === 'percent' ? 'a whole percentage from 1 to 100' : 'a whole number of screens, 1 or more'}.` };
    waves.push(w.kind === 'screens' ? { screens: n } : { percent: n });
  }
  const body: Record<string, unknown> = {
    releaseId: d.releaseId,
    targets: t.all ? { all: true } : { screenIds: t.screenIds ?? [], groupIds: t.groupIds ?? [], locationIds: t.locationIds ?? [] },
    waves,
    failureThreshold: Number(d.failureThreshold),
    waveWaitSec: Math.round(Number(d.waveWaitMin) * 60),
    confirmTimeoutSec: Math.round(Number(d.confirmTimeoutMin) * 60),
  };
  if (d.windowOn) {
    if (!d.windowStart || !d.windowEnd) return { missing: 'Give the maintenance window’s start and end.' };
    body.maintenanceWindow = { start: d.windowStart, end: d.windowEnd };
  }
  return { body };
}

function NewDeployment({ initialRelease, onCancel, onCreated }: { initialRelease: string; onCancel: () => void; onCreated: (d: Deployment) => void }) {
  const choices = useLoad(loadChoices);
  const [draft, setDraft] = useState<Draft>({
    releaseId: initialRelease,
    targets: {},
    waves: toRows(DEFAULT_WAVES),
    waveWaitMin: '10',
    failureThreshold: '1',
    confirmTimeoutMin: '30',
    windowOn: false,
    windowStart: '02:00',
    windowEnd: '05:00',
  });
  const [missing, setMissing] = useState('');
  const create = useAction(async () => {
    const built = bodyOf(draft);
    if ('missing' in built) return setMissing(built.missing);
    setMissing('');
    const release = choices.data?.releases.find((r) => r.id === draft.releaseId);
    const yes = await confirmAction({
      title: `Deploy ${release ? releaseWords(release) : 'this release'}?`,
      body: (
        <p>
          The chosen screens running this kind of player are offered the update in {draft.waves.length} wave{draft.waves.length === 1 ? '' : 's'}, the first
          being the canary; a screen installs it at once{draft.windowOn ? ` inside ${draft.windowStart}–${draft.windowEnd} its local time` : ''} and restarts
          its player. The rollout pauses when {draft.failureThreshold} screen{draft.failureThreshold === '1' ? '' : 's'} fail.
        </p>
      ),
      confirmLabel: 'Start deployment',
    });
    if (!yes) return;
    const d = await api.post<Deployment>('update-deployments', built.body);
    showToast('Deployment started.');
    onCreated(d);
  });
  const err = create.error instanceof ApiError ? create.error : null;
  const at = (...path: (string | number)[]) => err?.messageAt(path);
  const setWave = (i: number, w: Draft['waves'][number]) => setDraft({ ...draft, waves: draft.waves.map((x, n) => (n === i ? w : x)) });
  const lists = choices.data && {
    screens: choices.data.screens.map((s) => ({
      id: s.id,
      name: s.playerVersion ? `${s.name} (${familyLabel(s.playerFamily ?? 'web')} ${s.playerVersion})` : s.name,
    })),
    groups: choices.data.groups,
    locations: choices.data.locations,
  };
  return (
    <form
      aria-label="New deployment"
      class="deployment-form"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>New deployment</h2>
      <ErrorNote error={choices.error} />
      {choices.data && (
        <>
          <Field
            label="Release"
            error={at('releaseId')}
            help={
              choices.data.releases.length === 0 ? 'No release is downloaded to this server yet: upload one or download it from the release source.' : undefined
            }
          >
            {(p) => (
              <select
                {...p}
                name="releaseId"
                aria-required="true"
                value={draft.releaseId}
                onChange={(e) => setDraft({ ...draft, releaseId: e.currentTarget.value })}
              >
                <option value="">Choose…</option>
                {choices.data!.releases.map((r) => (
                  <option key={r.id} value={r.id}>
                    {releaseWords(r)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {lists && (
            <TargetPicker legend="Screens to update" allowAll lists={lists} value={draft.targets} onChange={(targets) => setDraft({ ...draft, targets })} />
          )}
          <small class="field-help">Screens running another kind of player, or already this version, are skipped and listed with why.</small>
          <fieldset class="waves-editor" data-testid="waves">
            <legend>Waves</legend>
            <small class="field-help">
              The first wave is the canary. Percentages count all the eligible screens from the start (50 % then 100 %: half, then the rest); the last wave
              always takes every screen left.
            </small>
            {draft.waves.map((w, i) => (
              <div class="row wave-row" key={i} data-wave={i}>
                <span class="wave-name">{i === 0 ? 'Canary' : `Wave ${i + 1}`}</span>
                <input
                  type="number"
                  min={1}
                  max={w.kind === 'percent' ? 100 : undefined}
                  step={1}
                  aria-label={`${i === 0 ? 'Canary' : `Wave ${i + 1}`} size`}
                  value={w.value}
                  onInput={(e) => setWave(i, { ...w, value: e.currentTarget.value })}
                />
                <select
                  aria-label={`${i === 0 ? 'Canary' : `Wave ${i + 1}`} counts in`}
                  value={w.kind}
                  onChange={(e) => setWave(i, { ...w, kind: e.currentTarget.value as 'screens' | 'percent' })}
                >
                  <option value="screens">screens</option>
                  <option value="percent">% of the screens</option>
                </select>
                {draft.waves.length > 1 && (
                  <button
                    type="button"
                    class="secondary outline small"
                    aria-label={`Remove ${i === 0 ? 'the canary' : `wave ${i + 1}`}`}
                    onClick={() => setDraft({ ...draft, waves: draft.waves.filter((_, n) => n !== i) })}
                  >
                    Remove
                  </button>
                )}
                {at('waves', i) && <small class="field-error">{at('waves', i)}</small>}
              </div>
            ))}
            <button
              type="button"
              class="secondary outline small"
              onClick={() => setDraft({ ...draft, waves: [...draft.waves, { kind: 'percent', value: '100' }] })}
            >
              Add a wave
            </button>
            {at('waves') && <small class="field-error">{at('waves')}</small>}
          </fieldset>
          <div class="grid">
            <Field label="Wait between waves (minutes)" error={at('waveWaitSec')}>
              {(p) => (
                <input
                  {...p}
                  type="number"
                  min={0}
                  step="any"
                  value={draft.waveWaitMin}
                  onInput={(e) => setDraft({ ...draft, waveWaitMin: e.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="Pause after this many failures" error={at('failureThreshold')}>
              {(p) => (
                <input
                  {...p}
                  type="number"
                  min={1}
                  step={1}
                  value={draft.failureThreshold}
                  onInput={(e) => setDraft({ ...draft, failureThreshold: e.currentTarget.value })}
                />
              )}
            </Field>
            <Field label="A screen must confirm within (minutes)" error={at('confirmTimeoutSec')} help="Else it counts as failed.">
              {(p) => (
                <input
                  {...p}
                  type="number"
                  min={0.05}
                  step="any"
                  value={draft.confirmTimeoutMin}
                  onInput={(e) => setDraft({ ...draft, confirmTimeoutMin: e.currentTarget.value })}
                />
              )}
            </Field>
          </div>
          <fieldset>
            <legend>When</legend>
            <label>
              <input type="checkbox" checked={draft.windowOn} onChange={(e) => setDraft({ ...draft, windowOn: e.currentTarget.checked })} /> Only inside a
              maintenance window (each screen's local time)
            </label>
            {draft.windowOn && (
              <div class="grid">
                <Field label="From" error={at('maintenanceWindow', 'start')}>
                  {(p) => <input {...p} type="time" value={draft.windowStart} onInput={(e) => setDraft({ ...draft, windowStart: e.currentTarget.value })} />}
                </Field>
                <Field label="Until" error={at('maintenanceWindow', 'end')} help="An end before the start runs past midnight.">
                  {(p) => <input {...p} type="time" value={draft.windowEnd} onInput={(e) => setDraft({ ...draft, windowEnd: e.currentTarget.value })} />}
                </Field>
              </div>
            )}
          </fieldset>
        </>
      )}
      {missing && (
        <p class="field-error" role="alert">
          {missing}
        </p>
      )}
      <ErrorNote error={create.error} />
      <div class="row">
        <button type="submit" aria-busy={create.busy} disabled={create.busy || !choices.data}>
          Review and deploy
        </button>
        <button type="button" class="secondary outline" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <p class="muted">
        {draft.waves.map((w, i) => waveWords(w.kind === 'screens' ? { screens: Number(w.value) } : { percent: Number(w.value) }, i)).join(' · ')}
      </p>
    </form>
  );
}
