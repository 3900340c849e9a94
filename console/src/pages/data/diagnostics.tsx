import { formatBytes } from '../../ui/fields';
import { UsageList } from '../../ui/confirm';
import type { DataSource, Diagnostics } from './model';
import { ScrollBox, Warnings } from './table';
import { age, every, failureWords, problemWords, when } from './words';

/** How a source fetches: its problem in plain words, the data's age, the next run, the last attempts. */
export function DiagnosticsPanel({ source, diagnostics }: { source: DataSource; diagnostics: Diagnostics }) {
  const d = diagnostics;
  const problem = problemWords(d);
  const snap = d.snapshot;
  const remote = d.refreshIntervalSec !== null;
  return (
    <section aria-labelledby="health-h" data-testid="diagnostics" data-stale={d.stale ? 'true' : 'false'}>
      <h2 id="health-h">Health</h2>
      {problem ? (
        <p class="error-note" role="alert" data-testid="problem">
          {problem}
        </p>
      ) : remote && snap ? (
        <p class="notice" data-testid="fine">
          Up to date: the last fetch worked at {when(d.lastSuccessAt)}.
        </p>
      ) : remote ? (
        <p class="muted" data-testid="waiting">
          Not fetched yet: Placard fetches it within a few seconds{d.nextRunAt ? ` (at ${when(d.nextRunAt)})` : ''}.
        </p>
      ) : null}
      <dl class="facts">
        {remote && (
          <>
            <div>
              <dt>Fetches</dt>
              <dd>{every(d.refreshIntervalSec)}</dd>
            </div>
            <div>
              <dt>Last fetch</dt>
              <dd>{d.attempts[0] ? `${when(d.attempts[0].at)} (${d.attempts[0].outcome === 'failed' ? 'failed' : 'worked'})` : 'none yet'}</dd>
            </div>
            <div>
              <dt>Next fetch</dt>
              <dd>{when(d.nextRunAt)}</dd>
            </div>
          </>
        )}
        <div>
          <dt>Data</dt>
          <dd data-testid="data-age">
            {snap
              ? `${snap.rowCount} row${snap.rowCount === 1 ? '' : 's'}, ${formatBytes(snap.sizeBytes)}, ${remote ? 'arrived' : 'saved'} ${when(snap.fetchedAt)}${
                  remote ? `, confirmed current ${age(snap.ageSec)} ago` : ''
                }`
              : 'none yet'}
            {d.stale && snap && (
              <>
                {' '}
                <span class="badge warn">stale</span>
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Time zone</dt>
          <dd>{source.timeZone}</dd>
        </div>
      </dl>
      {snap && <Warnings warnings={snap.warnings} />}
      {d.usedBy.length > 0 ? <UsageList usages={d.usedBy} label="Used by:" /> : <p class="muted">Nothing uses it yet.</p>}
      {d.screens.length > 0 && (
        <p data-testid="showing-screens">
          Showing now on {d.screens.length === 1 ? 'screen' : `${d.screens.length} screens`}:{' '}
          {d.screens.map((sc, i) => (
            <span key={sc.id}>
              {i > 0 && ', '}
              <a href={`/screens/${sc.id}`}>{sc.name}</a>
            </span>
          ))}
        </p>
      )}
      {d.attempts.length > 0 && (
        <details data-testid="attempts">
          <summary>The last {d.attempts.length} fetches</summary>
          <ScrollBox label="The last fetches">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Size</th>
                  <th scope="col">Took</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a) => (
                  <tr key={a.at + a.outcome}>
                    <td class="nowrap">{when(a.at)}</td>
                    <td>
                      {a.outcome === 'failed' ? (
                        <span class="badge bad">failed</span>
                      ) : a.outcome === 'unchanged' ? (
                        <span class="badge">unchanged</span>
                      ) : (
                        <span class="badge ok">new data</span>
                      )}
                    </td>
                    <td>{a.outcome === 'failed' ? failureWords(d.provider, a) : a.status ? `HTTP ${a.status}` : '—'}</td>
                    <td class="nowrap">{formatBytes(a.bytes)}</td>
                    <td class="nowrap">{a.latencyMs} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </details>
      )}
    </section>
  );
}
