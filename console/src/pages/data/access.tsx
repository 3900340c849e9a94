import { useState } from 'preact/hooks';
import { api, type Page } from '../../api';
import { ErrorNote, Notice, useAction, useLoad } from '../../ui';
import { type Access, type AccessLevel, can, type DataSource, type DirectoryEntry } from './model';

/**
 * Who may do what with one source: the grants (editors of the source see them, its owners
 * change them) and what each role has without one. docs/data-sources.md, "Access".
 */

const LEVEL_WORDS: Record<AccessLevel, string> = {
  viewer: 'can read it',
  editor: 'can change it',
  owner: 'can change, delete and share it',
};
const ROLE_PLURAL: Record<string, string> = { publisher: 'publishers', editor: 'editors', viewer: 'viewers' };

export function AccessPanel({ source }: { source: DataSource }) {
  const owner = can(source, 'owner');
  const access = useLoad(() => api.get<Access>(`data-sources/${source.id}/access?limit=500`), [source.id]);
  const directory = useLoad(
    () => (owner ? api.get<Page<DirectoryEntry>>(`data-sources/${source.id}/user-directory?limit=500`) : Promise.resolve(null)),
    [source.id, owner],
  );
  const [userId, setUserId] = useState('');
  const [level, setLevel] = useState<AccessLevel>('editor');
  const [said, setSaid] = useState<string | null>(null);
  const put = useAction(async (who: string, next: AccessLevel | null) => {
    const r = await api.put<{ displayName: string; level: AccessLevel; grant: AccessLevel | null }>(`data-sources/${source.id}/access/${who}`, { level: next });
    setSaid(`${r.displayName} ${LEVEL_WORDS[r.level]}${r.grant ? '' : ' (their role’s default)'}.`);
    await access.reload();
  });
  const a = access.data;
  const granted = new Set(a?.items.map((g) => g.userId));
  const people = (directory.data?.items ?? []).filter((p) => !granted.has(p.id));
  return (
    <section aria-labelledby="access-h" data-testid="access">
      <h2 id="access-h">Access</h2>
      <ErrorNote error={access.error} />
      {a && (
        <p class="muted">
          Owners and admins of this server have every source. Without a grant below,{' '}
          {(['publisher', 'editor', 'viewer'] as const).map((r) => `${ROLE_PLURAL[r]} ${LEVEL_WORDS[a.defaults[r]]}`).join(', ')}.
        </p>
      )}
      {a && a.items.length > 0 && (
        <ul class="grants">
          {a.items.map((g) => (
            <li key={g.userId} data-grant={g.displayName} class="row">
              <span>
                <strong>{g.displayName}</strong> <small class="muted">({g.role})</small> {!owner && LEVEL_WORDS[g.level]}
              </span>
              {owner && (
                <>
                  <select
                    aria-label={`Access of ${g.displayName}`}
                    value={g.level}
                    disabled={put.busy}
                    onChange={(e) => void put.run(g.userId, e.currentTarget.value as AccessLevel)}
                  >
                    {(Object.keys(LEVEL_WORDS) as AccessLevel[]).map((l) => (
                      <option key={l} value={l}>
                        {LEVEL_WORDS[l]}
                      </option>
                    ))}
                  </select>
                  <button
                    type="button"
                    class="secondary outline small"
                    aria-label={`Remove grant: ${g.displayName}`}
                    disabled={put.busy}
                    onClick={() => void put.run(g.userId, null)}
                  >
                    Remove grant
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {a && a.items.length === 0 && <p class="muted">No grants: everyone has their role’s default.</p>}
      {owner && directory.data && people.length === 0 && <p class="muted">Everyone who can be given access has a grant.</p>}
      {owner && people.length > 0 && (
        <form
          aria-label="Grant access"
          onSubmit={(e) => {
            e.preventDefault();
            if (userId) void put.run(userId, level).then((ok) => ok && setUserId(''));
          }}
        >
          <div class="row grant-row">
            {/* Made again when the list changes: a granted person leaves it, and the choice goes back to the prompt. */}
            <select key={people.length} aria-label="Person" value={userId} onChange={(e) => setUserId(e.currentTarget.value)} required>
              <option value="">Choose a person…</option>
              {people.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.displayName} ({p.role})
                </option>
              ))}
            </select>
            <select aria-label="Access" value={level} onChange={(e) => setLevel(e.currentTarget.value as AccessLevel)}>
              {(Object.keys(LEVEL_WORDS) as AccessLevel[]).map((l) => (
                <option key={l} value={l}>
                  {LEVEL_WORDS[l]}
                </option>
              ))}
            </select>
            <button type="submit" aria-busy={put.busy} disabled={put.busy}>
              Grant
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={directory.error} />
      <ErrorNote error={put.error} />
      {said && !put.error && <Notice>{said}</Notice>}
    </section>
  );
}
