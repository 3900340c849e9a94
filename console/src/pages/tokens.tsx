import { useState } from 'preact/hooks';
import { api, ApiError, type Page } from '../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useTitle } from '../ui';
import { ConfirmDialog, CopyField } from '../ui/dialogs';
import { Field } from '../ui/fields';

type Capability = 'fleet_health:read' | 'manual_table_rows:write';
interface Token {
  id: string;
  name: string;
  capabilities: Capability[];
  createdAt: string;
  createdBy: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What each capability lets another system do, in plain words. */
const CAPABILITIES: { key: Capability; label: string; help: string }[] = [
  {
    key: 'fleet_health:read',
    label: 'Read the state of every screen',
    help: 'Which screens are online or offline and when each was last seen, for a monitoring tool (Uptime Kuma, Home Assistant, Nagios…). It reads GET /api/v1/fleet-health and nothing else.',
  },
  {
    key: 'manual_table_rows:write',
    label: 'Write rows of data tables',
    help: 'For a till or spreadsheet that keeps a menu or price list up to date. This version has no data tables yet, so a token with only this can do nothing for now.',
  },
];
const capabilityLabel = (c: Capability) => CAPABILITIES.find((x) => x.key === c)?.label ?? c;

/** Integration tokens (owners): make one with chosen capabilities, see it once, revoke it. */
export function TokensPage() {
  useTitle('Integration tokens');
  const tokens = useLoad(() => api.get<Page<Token>>('integration-tokens?limit=500'));
  const [made, setMade] = useState<(Token & { token: string }) | null>(null);
  const [revoking, setRevoking] = useState<Token | null>(null);
  const [name, setName] = useState('');
  const [caps, setCaps] = useState<Capability[]>([]);
  const [capsMissing, setCapsMissing] = useState(false);
  const create = useAction(async () => {
    if (caps.length === 0) {
      setCapsMissing(true);
      return;
    }
    const t = await api.post<Token & { token: string }>('integration-tokens', { name, capabilities: caps });
    setMade(t);
    setName('');
    setCaps([]);
    await tokens.reload();
  });
  const revoke = useAction(async (t: Token) => {
    await api.post(`integration-tokens/${t.id}/revoke`);
    setRevoking(null);
    await tokens.reload();
  });
  const fieldError = (f: string) => (create.error instanceof ApiError ? create.error.fieldMessage(f) : undefined);
  const items = tokens.data?.items ?? [];
  const fleetUrl = `${window.location.origin}/api/v1/fleet-health`;
  return (
    <>
      <hgroup>
        <h1>Integration tokens</h1>
        <p>Keys that let another system use a small part of this server, without an account. Only owners see this page.</p>
      </hgroup>

      {made && (
        <section class="token-new" aria-labelledby="made-h" data-testid="token-made">
          <h2 id="made-h" class="small-heading">
            Token “{made.name}” is ready
          </h2>
          <CopyField
            label="The token"
            value={made.token}
            testId="token-value"
            help="Copy it now and keep it somewhere safe: it is not shown again. Anyone who has it can do what it allows."
          />
          <details>
            <summary>How to use it</summary>
            <p>Send it in the Authorization header of each request, for example:</p>
            <pre>
              <code>{`curl -H "Authorization: Bearer ${made.token}" ${fleetUrl}`}</code>
            </pre>
          </details>
          <button type="button" class="secondary" onClick={() => setMade(null)}>
            I have copied it
          </button>
        </section>
      )}

      <article aria-labelledby="new-token-h">
        <header>
          <h2 id="new-token-h">Make a token</h2>
        </header>
        <form
          aria-label="Make a token"
          onSubmit={(e) => {
            e.preventDefault();
            setCapsMissing(false);
            void create.run();
          }}
        >
          <Field
            label="Name"
            error={fieldError('name')}
            help="Say what will use it, so you know what stops working if you revoke it (e.g. “Uptime Kuma in the office”)."
          >
            {(p) => <input {...p} name="name" required maxLength={100} autocomplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <fieldset class="choices" aria-describedby={capsMissing || fieldError('capabilities') ? 'caps-error' : undefined}>
            <legend>What it may do</legend>
            {CAPABILITIES.map((c) => (
              <div class="field check-field" key={c.key}>
                <label>
                  <input
                    type="checkbox"
                    name="capabilities"
                    value={c.key}
                    checked={caps.includes(c.key)}
                    aria-describedby={`cap-${c.key.replace(/\W/g, '-')}`}
                    onChange={(e) => {
                      setCapsMissing(false);
                      setCaps(e.currentTarget.checked ? [...caps, c.key] : caps.filter((x) => x !== c.key));
                    }}
                  />
                  {c.label}
                </label>
                <small id={`cap-${c.key.replace(/\W/g, '-')}`} class="field-help">
                  {c.help}
                </small>
              </div>
            ))}
            {(capsMissing || fieldError('capabilities')) && (
              <small id="caps-error" class="field-error">
                {capsMissing ? 'Tick at least one thing it may do.' : fieldError('capabilities')}
              </small>
            )}
          </fieldset>
          <ErrorNote error={create.error ?? (capsMissing ? new Error('Tick at least one thing the token may do.') : null)} />
          <div class="form-actions">
            <button type="submit" aria-busy={create.busy} disabled={create.busy}>
              Make token
            </button>
          </div>
        </form>
      </article>

      <h2>Tokens</h2>
      <ErrorNote error={tokens.error} />
      <div class="table-wrap">
        <table class="striped" aria-busy={tokens.loading}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">May</th>
              <th scope="col">Made</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((t) => (
              <tr key={t.id} data-token={t.name} class={t.revokedAt ? 'disabled' : undefined}>
                <td>
                  {t.name}
                  {t.revokedAt && <span class="badge warn">revoked {formatTime(t.revokedAt)}</span>}
                </td>
                <td>
                  <ul class="capability-list">
                    {t.capabilities.map((c) => (
                      <li key={c}>{capabilityLabel(c)}</li>
                    ))}
                  </ul>
                </td>
                <td class="nowrap">
                  <span class="cell-label">Made </span>
                  {formatTime(t.createdAt)}
                </td>
                <td class="nowrap">
                  <span class="cell-label">Last used </span>
                  <span data-testid="last-used">{t.lastUsedAt ? formatTime(t.lastUsedAt) : <span class="muted">never</span>}</span>
                </td>
                <td class="actions">
                  {!t.revokedAt && (
                    <button type="button" class="danger outline small" aria-label={`Revoke ${t.name}`} onClick={() => setRevoking(t)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
            {!tokens.loading && items.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No tokens yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {revoke.error && !revoking ? <ErrorNote error={revoke.error} /> : null}
      {revoking && (
        <ConfirmDialog
          open
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke"
          danger
          busy={revoke.busy}
          error={revoke.error}
          onConfirm={() => void revoke.run(revoking)}
          onClose={() => {
            revoke.setError(null);
            setRevoking(null);
          }}
        >
          <p>
            It stops working at once: whatever uses it ({revoking.capabilities.map(capabilityLabel).join(', ').toLowerCase()}) gets refused. This cannot be
            undone; make a new token if you need one again.
          </p>
        </ConfirmDialog>
      )}
      {!made && items.some((t) => !t.revokedAt) && <Notice>Tokens are shown only when they are made. Lost one? Revoke it and make a new one.</Notice>}
    </>
  );
}
