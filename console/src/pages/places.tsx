import { api, atLeast, type Page } from '../api';
import type { Group, Location, PlaylistSummary, Screen } from '../types';
import { ErrorNote, formValues, useAction, useLoad, useSession, useTitle } from '../ui';
import { confirmAction, showToast } from '../ui/confirm';

/** Every IANA zone this browser knows (for time zone pickers). */
export const TIME_ZONES = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
})();

/** Screen groups: members and the playlist the group plays by default. */
export function GroupsPage() {
  useTitle('Groups');
  const { user } = useSession();
  const admin = atLeast(user, 'admin');
  const groups = useLoad(() => api.get<Page<Group>>('screen-groups?limit=500'));
  const screens = useLoad(() => api.get<Page<Screen>>('screens?limit=500'));
  const playlists = useLoad(() => api.get<Page<PlaylistSummary>>('playlists?limit=500'));
  const create = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    await api.post('screen-groups', { name: v.name, description: v.description || null });
    form.reset();
    await groups.reload();
  });
  return (
    <>
      <PlacesNav current="/groups" />
      <hgroup>
        <h1>Groups</h1>
        <p>Screens that show the same things. A group’s playlist plays on members without one of their own.</p>
      </hgroup>
      {admin && (
        <form
          aria-label="New group"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(e.currentTarget);
          }}
        >
          <fieldset role="group">
            <input name="name" placeholder="New group name" aria-label="New group name" required maxLength={200} />
            <input name="description" placeholder="Description (optional)" aria-label="Description" maxLength={2000} />
            <button type="submit" aria-busy={create.busy}>
              Create group
            </button>
          </fieldset>
          <ErrorNote error={create.error} />
        </form>
      )}
      <ErrorNote error={groups.error} />
      {(groups.data?.items ?? []).map((g) => (
        <GroupCard key={g.id} group={g} screens={screens.data?.items ?? []} playlists={playlists.data?.items ?? []} admin={admin} onChanged={groups.reload} />
      ))}
      {groups.data && groups.data.items.length === 0 && <p class="muted">No groups yet.</p>}
    </>
  );
}

function GroupCard({
  group,
  screens,
  playlists,
  admin,
  onChanged,
}: {
  group: Group;
  screens: Screen[];
  playlists: PlaylistSummary[];
  admin: boolean;
  onChanged: () => Promise<void>;
}) {
  const assignment = useLoad(
    () => api.get<{ playlistId: string | null; playlistName: string | null }>(`screen-groups/${group.id}/playlist-assignment`),
    [group.id],
  );
  const act = useAction(async (what: () => Promise<unknown>) => {
    await what();
    await onChanged();
    await assignment.reload();
  });
  const members = screens.filter((s) => group.screenIds.includes(s.id));
  const others = screens.filter((s) => !group.screenIds.includes(s.id));
  return (
    <article data-group={group.name} id={`group-${group.id}`}>
      <header class="row spread">
        <h2>{group.name}</h2>
        {admin && (
          <button
            type="button"
            class="contrast outline small"
            onClick={async () => {
              const members = screens.filter((s) => group.screenIds.includes(s.id));
              const yes = await confirmAction({
                title: `Delete the group ${group.name}?`,
                body: (
                  <p>
                    Its screens stay. Members that played the group’s playlist fall back to their own default (or the idle slide); schedules aimed at the group
                    no longer reach them.
                  </p>
                ),
                confirmLabel: 'Delete group',
                danger: true,
                screens: members.map((s) => ({ id: s.id, name: s.name })),
                screensLabel: 'Its screens:',
              });
              if (yes) void act.run(() => api.del(`screen-groups/${group.id}`));
            }}
          >
            Delete
          </button>
        )}
      </header>
      {group.description && <p>{group.description}</p>}
      <label>
        Group playlist
        <select
          value={assignment.data?.playlistId ?? ''}
          disabled={!admin || act.busy}
          onChange={(e) => {
            const playlistId = e.currentTarget.value;
            const before = assignment.data?.playlistId ?? '';
            const set = (id: string) =>
              id ? api.put(`screen-groups/${group.id}/playlist-assignment`, { playlistId: id }) : api.del(`screen-groups/${group.id}/playlist-assignment`);
            void act
              .run(() => set(playlistId))
              .then((ok) => {
                if (ok)
                  showToast(`The group’s playlist changed.`, async () => {
                    await set(before);
                    await onChanged();
                    await assignment.reload();
                  });
              });
          }}
        >
          <option value="">None</option>
          {playlists.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <p class="muted" data-testid="group-default">
        {assignment.data?.playlistId
          ? `Plays ${assignment.data.playlistName ?? 'its playlist'} by default (members without their own playlist, when no schedule applies).`
          : assignment.data
            ? 'No default playlist: members play their own, or the idle slide.'
            : ''}
      </p>
      <ErrorNote error={assignment.error} />
      <p>
        {members.length === 0 ? (
          <span class="muted">No screens yet.</span>
        ) : (
          members.map((s) => (
            <span key={s.id} class="badge">
              <a href={`/screens/${s.id}`}>{s.name}</a>
              {admin && (
                <button
                  type="button"
                  class="link-button"
                  aria-label={`Remove ${s.name} from ${group.name}`}
                  onClick={() => void act.run(() => api.del(`screen-groups/${group.id}/screens/${s.id}`))}
                >
                  ×
                </button>
              )}
            </span>
          ))
        )}
      </p>
      {admin && others.length > 0 && (
        <select
          aria-label={`Add a screen to ${group.name}`}
          value=""
          onChange={(e) => {
            const id = e.currentTarget.value;
            if (id) void act.run(() => api.post(`screen-groups/${group.id}/screens`, { screenIds: [id] }));
          }}
        >
          <option value="">Add a screen…</option>
          {others.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      )}
      <ErrorNote error={act.error} />
    </article>
  );
}

/** Locations: where screens are, and the time zone their schedules run in. */
export function LocationsPage() {
  useTitle('Locations');
  const { user } = useSession();
  const admin = atLeast(user, 'admin');
  const locations = useLoad(() => api.get<Page<Location>>('locations?limit=500'));
  const create = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    await api.post('locations', { name: v.name, timeZone: v.timeZone, address: v.address || null });
    form.reset();
    await locations.reload();
  });
  const remove = useAction(async (l: Location) => {
    await api.del(`locations/${l.id}`);
    await locations.reload();
  });
  const here = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return (
    <>
      <PlacesNav current="/locations" />
      <hgroup>
        <h1>Locations</h1>
        <p>Schedules run in the time zone of the screen’s location.</p>
      </hgroup>
      {admin && (
        <form
          aria-label="New location"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(e.currentTarget);
          }}
        >
          <div class="grid">
            <label>
              Name
              <input name="name" required maxLength={200} />
            </label>
            <label>
              Time zone
              <select name="timeZone" defaultValue={here}>
                {TIME_ZONES.map((z) => (
                  <option key={z} value={z} selected={z === here}>
                    {z}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Address
              <input name="address" maxLength={500} />
            </label>
          </div>
          <ErrorNote error={create.error} />
          <button type="submit" aria-busy={create.busy}>
            Add location
          </button>
        </form>
      )}
      <ErrorNote error={locations.error ?? remove.error} />
      <div class="table-wrap">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Time zone</th>
              <th scope="col">Address</th>
              <th scope="col">Screens</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(locations.data?.items ?? []).map((l) => (
              <tr key={l.id} data-location={l.name}>
                <td>{l.name}</td>
                <td>{l.timeZone}</td>
                <td>{l.address ?? '—'}</td>
                <td>
                  <a href={`/screens?locationId=${l.id}`}>{l.screenCount}</a>
                </td>
                <td class="actions">
                  {admin && (
                    <button
                      type="button"
                      class="contrast outline small"
                      onClick={async () => {
                        if (
                          await confirmAction({
                            title: `Delete the location ${l.name}?`,
                            body: <p>Only a location without screens can go; schedules aimed at it stop reaching anything.</p>,
                            confirmLabel: 'Delete location',
                            danger: true,
                          })
                        )
                          void remove.run(l);
                      }}
                    >
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Groups and locations share one entry in the main navigation; this switches between them. */
function PlacesNav({ current }: { current: '/groups' | '/locations' }) {
  return (
    <nav aria-label="Groups and locations" class="sub-nav">
      <ul>
        {(
          [
            ['/groups', 'Groups'],
            ['/locations', 'Locations'],
          ] as const
        ).map(([href, label]) => (
          <li key={href}>
            <a href={href} aria-current={href === current ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
