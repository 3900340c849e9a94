import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { ErrorNote, formatTime, useAction, useLoad, useTitle } from '../../ui';
import { showToast } from '../../ui/confirm';
import { ConfirmDialog } from '../../ui/dialogs';
import { formatDuration } from '../../ui/fields';
import { countWords, releaseWords } from './deployments';
import {
  type Deployment,
  DEPLOYMENT_STATE_LABEL,
  type DeploymentScreen,
  ERROR_LABEL,
  pausedWords,
  SCREEN_STATE_LABEL,
  SKIP_REASON_LABEL,
  tone,
  waveWords,
} from './model';
import { UpdatesNav } from './nav';
import './updates.css';

const waveLabel = (wave: number | null) => (wave === null ? '—' : wave === 0 ? 'canary' : `wave ${wave + 1}`);

/** One deployment, live: its waves and each screen's state, read again every 2 s while it runs or is paused. */
export function DeploymentPage({ id }: { id: string }) {
  const dep = useLoad(() => api.get<Deployment>(`update-deployments/${id}`), [id]);
  const d = dep.data;
  useTitle(d ? `Deployment of ${releaseWords(d.release)}` : 'Deployment');
  const live = d?.state === 'running' || d?.state === 'paused';
  useEffect(() => {
    if (!live) return;
    const t = window.setInterval(() => void dep.reload(), 2000);
    return () => window.clearInterval(t);
  }, [live, dep.reload]);

  const [asking, setAsking] = useState(false);
  const cancel = useAction(async () => {
    const next = await api.post<Deployment>(`update-deployments/${id}/cancel`, {});
    dep.setData(next);
    setAsking(false);
    showToast('Deployment cancelled: no further screens are offered the update.');
  });
  const pause = useAction(async () => {
    const next = await api.post<Deployment>(`update-deployments/${id}/pause`, {});
    dep.setData(next);
    resume.setError(null);
    showToast('Deployment paused: nobody new is offered the update until you resume it.');
  });
  const resume = useAction(async () => {
    const next = await api.post<Deployment>(`update-deployments/${id}/resume`, {});
    dep.setData(next);
    pause.setError(null);
    showToast('Deployment resumed.');
  });
  const retry = useAction(async (s: DeploymentScreen) => {
    const next = await api.post<Deployment>(`update-deployments/${id}/screens/${s.screenId}/retry`, {});
    dep.setData(next);
    showToast(`${s.name} is offered the update again.`);
  });

  // The server refuses to resume while the failures are at the threshold: no Resume then, the notice says to retry.
  const tooManyFailed = !!d && d.counts.failed >= d.failureThreshold;
  const screens = d?.screens ?? [];
  const inRollout = screens.filter((s) => s.state !== 'skipped');
  const skipped = screens.filter((s) => s.state === 'skipped');
  return (
    <>
      <hgroup>
        <h1>Player updates</h1>
        <p>
          <a href="/updates/deployments">All deployments</a>
        </p>
      </hgroup>
      <UpdatesNav current="deployments" />
      {!d && <ErrorNote error={dep.error} />}
      {!d && !dep.error && <p aria-busy="true">Loading…</p>}
      {d && (
        <>
          <section aria-labelledby="dep-h" data-testid="deployment">
            <header class="row spread">
              <h2 id="dep-h">Deployment of {releaseWords(d.release)}</h2>
              <span class={`badge ${tone(d.state)}`} data-testid="deployment-state">
                {DEPLOYMENT_STATE_LABEL[d.state] ?? d.state}
              </span>
            </header>
            {d.state === 'paused' && (
              <p class="notice warn" role="status" data-testid="paused-reason">
                {pausedWords(d.pausedReason)}
                {d.pausedReason === 'failure_threshold' ? ` (${d.counts.failed} failed; it pauses at ${d.failureThreshold})` : ''}.{' '}
                {d.pausedReason === 'manual' && 'Screens already offered the update carry on; nobody else is offered it and no wave starts until you resume. '}
                {tooManyFailed ? 'Retry the failed screens to carry on, or cancel.' : d.pausedReason === 'manual' ? '' : 'Resume to carry on, or cancel.'}
              </p>
            )}
            <p data-testid="deployment-counts">{countWords(d)}.</p>
            <p class="muted">
              Started {formatTime(d.createdAt)}. Pauses after {d.failureThreshold} failure{d.failureThreshold === 1 ? '' : 's'};{' '}
              {d.waveWaitSec > 0 ? `waits ${formatDuration(d.waveWaitSec)} between waves` : 'starts each wave as soon as the one before settles'}; a screen
              confirms within {formatDuration(d.confirmTimeoutSec)}
              {d.maintenanceWindow ? `; only ${d.maintenanceWindow.start}–${d.maintenanceWindow.end} each screen's local time` : ''}.
            </p>
            <ErrorNote error={dep.error} />
            {live && (
              <div class="row" data-testid="deployment-actions">
                {d.state === 'running' && (
                  <button type="button" class="secondary" disabled={pause.busy} onClick={() => void pause.run()}>
                    Pause
                  </button>
                )}
                {d.state === 'paused' && !tooManyFailed && (
                  <button type="button" disabled={resume.busy} onClick={() => void resume.run()}>
                    Resume
                  </button>
                )}
                <button type="button" class="danger" onClick={() => setAsking(true)}>
                  Cancel deployment
                </button>
              </div>
            )}
            <ErrorNote error={pause.error ?? resume.error} />
          </section>
          <section aria-labelledby="waves-h">
            <h3 id="waves-h">Waves</h3>
            <div class="table-wrap">
              <table class="striped updates-table" data-testid="waves-table">
                <thead>
                  <tr>
                    <th scope="col">Wave</th>
                    <th scope="col">Screens</th>
                    <th scope="col">State</th>
                    <th scope="col">Started</th>
                    <th scope="col">Done</th>
                  </tr>
                </thead>
                <tbody>
                  {d.waves.map((w) => (
                    <tr key={w.index} data-wave={w.index} aria-current={w.index === d.currentWave && live ? 'step' : undefined}>
                      <td data-label="Wave">{waveWords(w, w.index)}</td>
                      <td data-label="Screens">{w.size}</td>
                      <td data-label="State">
                        <span class={`badge ${w.state === 'done' ? 'ok' : w.state === 'active' ? 'warn' : ''}`}>
                          {w.state === 'active' ? 'under way' : w.state === 'done' ? 'done' : 'waiting'}
                        </span>
                      </td>
                      <td data-label="Started">{formatTime(w.startedAt)}</td>
                      <td data-label="Done">{formatTime(w.completedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <section aria-labelledby="screens-h">
            <h3 id="screens-h">Screens</h3>
            {inRollout.length === 0 && <p class="muted">No screen takes part in this deployment.</p>}
            {inRollout.length > 0 && (
              <div class="table-wrap">
                <table class="striped deployment-screens updates-table" data-testid="deployment-screens">
                  <thead>
                    <tr>
                      <th scope="col">Screen</th>
                      <th scope="col">Wave</th>
                      <th scope="col">State</th>
                      <th scope="col">Version</th>
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {inRollout.map((s) => (
                      <tr key={s.screenId} data-screen={s.name} data-state={s.state}>
                        <td data-label="Screen">
                          <a href={`/screens/${s.screenId}`}>{s.name}</a>
                        </td>
                        <td data-label="Wave">{waveLabel(s.wave)}</td>
                        <td data-label="State">
                          <span class={`badge ${tone(s.state)}`} data-testid="screen-state">
                            {SCREEN_STATE_LABEL[s.state] ?? s.state}
                          </span>
                          {s.progress !== null && (s.state === 'downloading' || s.state === 'downloaded') && (
                            <progress
                              class="screen-progress"
                              value={s.progress}
                              max={1}
                              aria-label={`${s.name}: ${Math.round(s.progress * 100)}% downloaded`}
                            />
                          )}
                          {s.error && s.error !== s.state && <small class="field-error">{ERROR_LABEL[s.error] ?? s.error}</small>}
                        </td>
                        <td data-label="Version">
                          {s.fromVersion ?? '—'}
                          {s.installedVersion ? ` → ${s.installedVersion}` : ''}
                          {s.confirmedAt && <small class="muted"> confirmed {formatTime(s.confirmedAt)}</small>}
                        </td>
                        <td class="actions">
                          {s.state === 'failed' && live && (
                            <button
                              type="button"
                              class="secondary outline small"
                              aria-label={`Retry ${s.name}`}
                              disabled={retry.busy}
                              onClick={() => void retry.run(s)}
                            >
                              Retry
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <ErrorNote error={retry.error} />
          </section>
          {skipped.length > 0 && (
            <section aria-labelledby="skipped-h">
              <h3 id="skipped-h">Skipped</h3>
              <ul class="skipped-list" data-testid="skipped">
                {skipped.map((s) => (
                  <li key={s.screenId} data-screen={s.name}>
                    <a href={`/screens/${s.screenId}`}>{s.name}</a>: {SKIP_REASON_LABEL[s.skipReason ?? ''] ?? s.skipReason ?? 'skipped'}
                    {s.fromVersion ? ` (runs ${s.fromVersion})` : ''}
                  </li>
                ))}
              </ul>
            </section>
          )}
          <ConfirmDialog
            open={asking}
            title="Cancel this deployment?"
            confirmLabel="Cancel deployment"
            cancelLabel="Keep it running"
            danger
            busy={cancel.busy}
            error={cancel.error}
            onConfirm={() => void cancel.run()}
            onClose={() => setAsking(false)}
          >
            <p>
              No further wave starts and screens that have not installed the update yet are no longer offered it. The {d.counts.installed} screen
              {d.counts.installed === 1 ? '' : 's'} that installed it keep the new version.
            </p>
          </ConfirmDialog>
        </>
      )}
    </>
  );
}
