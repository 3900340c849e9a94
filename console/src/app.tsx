import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { api, atLeast, setCsrfToken, setUnauthenticatedHandler, type AuthStatus } from './api';
import { applyTheme, type Theme } from './theme';
import { ErrorNote, SessionContext, useSession, type Session } from './ui';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/signin';
import { HomePage } from './pages/home';
import { SecurityPage } from './pages/security';
import { UsersPage } from './pages/users';
import { LibraryPage } from './pages/library';
import { AddScreenPage, ScreensPage } from './pages/screens';
import { ScreenDetailPage } from './pages/screen-detail';
import { GroupsPage, LocationsPage } from './pages/places';
import { PlaylistDetailPage, PlaylistsPage } from './pages/playlists';
import { SchedulesPage } from './pages/schedules';
import { CampaignPage, CampaignsPage } from './pages/campaigns';
import { NetworkPage, NetworksPage } from './pages/networks';
import { TakeoversPage } from './pages/takeovers';
import { WeatherPage } from './pages/weather';
import { LayoutDetailPage, LayoutsPage } from './pages/layouts';
import { ApprovalsPage } from './pages/approvals';
import { DataSourcePage, DataSourcesPage, NewDataSourcePage } from './pages/data';
import { NewWidgetPage, WidgetPage, WidgetsPage } from './pages/widgets';
import { approvalsCount } from './pages/data/records-model';
import { addCounts, pendingSubmissionsCount } from './pages/approvals-content';
import { NotificationBell } from './ui/notifications';
import { NotFoundPage } from './pages/not-found';
import { DemoBanner } from './demo-banner';
import { SetPasswordPage } from './pages/password';
import { SettingsPage } from './pages/settings';
import { SystemPage } from './pages/system';
import { BackupsPage } from './pages/backups';
import { TokensPage } from './pages/tokens';
import { InstanceEditorPage, PluginInstancesPage, PluginsPage } from './pages/plugins';
import { DeploymentPage, DeploymentsPage, ReleasesPage } from './pages/updates';

/** The noise report loads on demand: it brings the chart library (uPlot) the other pages do not need. */
const NoiseReportPage = lazy(() => import('./pages/plugins/report').then((m) => m.NoiseReportPage));
import { setServerLocale, setUserLocale } from './locale';
import { FeedbackHost } from './ui/confirm';

/** The gate: setup, sign-in (with its second step), or the signed-in console. */
export function App() {
  const [status, setStatus] = useState<AuthStatus | null>(null);
  const [error, setError] = useState<unknown>(null);

  const refresh = useCallback(async () => {
    try {
      const s = await api.get<AuthStatus>('auth/status');
      setCsrfToken(s.csrfToken);
      setStatus(s);
      setError(null);
    } catch (err) {
      setError(err);
      // A restore is swapping the database (503 not_ready): ask again by itself until it is done.
      if ((err as { code?: string }).code === 'not_ready') window.setTimeout(() => void refresh(), 3000);
    }
  }, []);

  useEffect(() => {
    setUnauthenticatedHandler(() => void refresh());
    void refresh();
  }, [refresh]);

  // Demo mode (docs/demo.md): a banner above every page, sign-in included.
  const banner = <DemoBanner user={status?.authenticated ? status.user : null} />;
  // A one-time set-password link opens its page whoever is (or is not) signed in here.
  if (window.location.pathname === '/set-password')
    return (
      <>
        {banner}
        <SetPasswordPage />
      </>
    );
  if (!status) {
    return (
      <>
        {banner}
        <main class="container gate">
          {error ? (
            <>
              <ErrorNote error={error} />
              <button type="button" onClick={() => void refresh()}>
                Try again
              </button>
            </>
          ) : (
            <p aria-busy="true">Loading…</p>
          )}
        </main>
      </>
    );
  }
  if (status.setupRequired)
    return (
      <>
        {banner}
        <SetupPage onDone={refresh} />
      </>
    );
  if (!status.authenticated || !status.user)
    return (
      <>
        {banner}
        <SignInPage mfaPending={status.mfaPending} onDone={refresh} />
      </>
    );
  return (
    <LocationProvider>
      {banner}
      <SignedIn status={status} refresh={refresh} />
    </LocationProvider>
  );
}

function SignedIn({ status, refresh }: { status: AuthStatus; refresh: () => Promise<void> }) {
  const user = status.user!;
  const signOut = useCallback(async () => {
    try {
      await api.post('auth/logout');
    } finally {
      setCsrfToken(null);
      await refresh();
    }
  }, [refresh]);
  const session = useMemo<Session>(() => ({ status, user, refresh, signOut }), [status, user, refresh, signOut]);

  // The user's theme preference (light/dark/system) applies on every page; when it cannot
  // be read the page says so (with a retry) instead of quietly showing another theme.
  const [themeError, setThemeError] = useState<unknown>(null);
  const [, setLocaleLoaded] = useState(0);
  const loadTheme = useCallback(() => {
    api
      .get<{ theme: Theme; locale?: string | null }>('me/preferences')
      .then((p) => {
        applyTheme(p.theme);
        setUserLocale(p.locale);
        setLocaleLoaded((n) => n + 1);
        setThemeError(null);
      })
      .catch((err) => setThemeError(err));
  }, []);
  useEffect(loadTheme, [user.id, loadTheme]);
  // Dates follow the user's locale, else the server's default one (Settings), else the browser's.
  useEffect(() => {
    api
      .get<{ locale: string | null }>('settings')
      .then((s) => {
        setServerLocale(s.locale);
        setLocaleLoaded((n) => n + 1);
      })
      .catch(() => {});
  }, [user.id]);

  return (
    <SessionContext.Provider value={session}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Nav />
      <main class="container" id="main" tabIndex={-1}>
        {themeError && (
          <div class="row theme-error" data-testid="theme-error">
            <ErrorNote error={themeError} />
            <small class="muted">Your theme preference could not be loaded; the device’s setting applies meanwhile.</small>
            <button type="button" class="secondary outline small" onClick={loadTheme}>
              Try again
            </button>
          </div>
        )}
        <Router>
          <Route path="/" component={HomePage} />
          <Route path="/screens" component={ScreensPage} />
          <Route path="/screens/add" component={atLeast(user, 'admin') ? AddScreenPage : NotFoundPage} />
          <Route path="/screens/:id" component={ScreenDetailPage} />
          <Route path="/groups" component={GroupsPage} />
          <Route path="/locations" component={LocationsPage} />
          <Route path="/library" component={LibraryPage} />
          <Route path="/playlists" component={PlaylistsPage} />
          <Route path="/playlists/:id" component={PlaylistDetailPage} />
          <Route path="/schedules" component={SchedulesPage} />
          <Route path="/campaigns" component={CampaignsPage} />
          <Route path="/campaigns/:id" component={CampaignPage} />
          <Route path="/takeovers" component={TakeoversPage} />
          <Route path="/weather" component={WeatherPage} />
          <Route path="/networks" component={NetworksPage} />
          <Route path="/networks/:id" component={NetworkPage} />
          <Route path="/layouts" component={LayoutsPage} />
          <Route path="/layouts/:id" component={LayoutDetailPage} />
          <Route path="/data" component={DataSourcesPage} />
          <Route path="/data/new" component={atLeast(user, 'editor') ? NewDataSourcePage : NotFoundPage} />
          <Route path="/data/:id" component={DataSourcePage} />
          <Route path="/widgets" component={WidgetsPage} />
          <Route path="/widgets/new" component={atLeast(user, 'editor') ? NewWidgetPage : NotFoundPage} />
          <Route path="/widgets/:id" component={WidgetPage} />
          <Route path="/plugins" component={PluginsPage} />
          <Route path="/plugins/noise-meter/instances/:id/report" component={NoiseReportPage} />
          <Route path="/plugins/:pluginId/new" component={atLeast(user, 'editor') ? InstanceEditorPage : NotFoundPage} />
          <Route path="/plugins/:pluginId/instances/:id" component={InstanceEditorPage} />
          <Route path="/plugins/:pluginId" component={PluginInstancesPage} />
          <Route path="/approvals" component={ApprovalsPage} />
          <Route path="/account" component={SecurityPage} />
          <Route path="/users" component={atLeast(user, 'admin') ? UsersPage : NotFoundPage} />
          <Route path="/settings" component={atLeast(user, 'admin') ? SettingsPage : NotFoundPage} />
          <Route path="/system" component={atLeast(user, 'admin') ? SystemPage : NotFoundPage} />
          <Route path="/backups" component={atLeast(user, 'admin') ? BackupsPage : NotFoundPage} />
          <Route path="/updates" component={atLeast(user, 'admin') ? ReleasesPage : NotFoundPage} />
          <Route path="/updates/deployments" component={atLeast(user, 'admin') ? DeploymentsPage : NotFoundPage} />
          <Route path="/updates/deployments/:id" component={atLeast(user, 'admin') ? DeploymentPage : NotFoundPage} />
          <Route path="/tokens" component={atLeast(user, 'owner') ? TokensPage : NotFoundPage} />
          <Route default component={NotFoundPage} />
        </Router>
      </main>
      <FeedbackHost />
    </SessionContext.Provider>
  );
}

interface NavItem {
  href: string;
  label: string;
  show: boolean;
  /** A count beside the label (what waits on the user). */
  badge?: string;
}

function Nav() {
  const { user, signOut } = useSession();
  const { path } = useLocation();
  // What waits on the user, asked again on each page change (one small request).
  const [waiting, setWaiting] = useState('');
  // Records waiting on the user, plus pending content submissions for those who decide on them (issue 20).
  useEffect(() => {
    const content = atLeast(user, 'publisher') ? pendingSubmissionsCount().catch(() => '') : Promise.resolve('');
    Promise.all([approvalsCount().catch(() => ''), content]).then(([a, b]) => setWaiting(addCounts(a, b)));
  }, [path, user]);
  const items: NavItem[] = [
    { href: '/', label: 'Overview', show: true },
    { href: '/screens', label: 'Screens', show: true },
    { href: '/groups', label: 'Groups & locations', show: true },
    { href: '/library', label: 'Library', show: true },
    { href: '/playlists', label: 'Playlists', show: true },
    { href: '/layouts', label: 'Layouts', show: true },
    { href: '/schedules', label: 'Schedules', show: true },
    { href: '/campaigns', label: 'Campaigns', show: true },
    { href: '/takeovers', label: 'Takeovers', show: true },
    { href: '/weather', label: 'Weather alerts', show: true },
    { href: '/networks', label: 'Networks', show: true },
    { href: '/data', label: 'Data', show: true },
    { href: '/widgets', label: 'Widgets', show: true },
    { href: '/plugins', label: 'Plugins', show: true },
    { href: '/approvals', label: 'Approvals', show: true, badge: waiting },
  ];
  // The user menu is a <details>: close it once a choice is made (it would stay open over the page).
  const closeMenu = (e: Event) => {
    const d = (e.currentTarget as HTMLElement).closest('details');
    if (d) d.open = false;
  };
  const current = (href: string) =>
    href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`) || (href === '/groups' && path === '/locations');
  // Administration: owners and admins (integration tokens: owners only).
  const adminItems: NavItem[] = [
    { href: '/users', label: 'Users', show: atLeast(user, 'admin') },
    { href: '/settings', label: 'Settings', show: atLeast(user, 'admin') },
    { href: '/backups', label: 'Backups', show: atLeast(user, 'admin') },
    { href: '/system', label: 'System status', show: atLeast(user, 'admin') },
    { href: '/updates', label: 'Updates', show: atLeast(user, 'admin') },
    { href: '/tokens', label: 'Integration tokens', show: atLeast(user, 'owner') },
  ].filter((i) => i.show);
  const inAdmin = adminItems.some((i) => current(i.href));
  // Phone width: the links fold behind a Menu button (closed again on every page change).
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <header class="site-header">
      <nav class="container" aria-label="Main">
        <ul class="brand-row">
          <li>
            <a href="/" class="brand">
              <img src="/favicon.svg" alt="" width="24" height="24" /> <strong>Placard</strong>
            </a>
          </li>
          <li class="bell-item">
            <NotificationBell path={path} />
          </li>
          <li class="menu-toggle-item">
            <button
              type="button"
              class="menu-toggle secondary outline"
              aria-expanded={menuOpen}
              aria-controls="nav-links"
              onClick={() => setMenuOpen((o) => !o)}
            >
              <span aria-hidden="true">☰</span> Menu
            </button>
          </li>
        </ul>
        <ul class={`nav-links${menuOpen ? ' open' : ''}`} id="nav-links">
          {items
            .filter((i) => i.show)
            .map((i) => (
              <li key={i.href}>
                <a href={i.href} aria-current={current(i.href) ? 'page' : undefined}>
                  {i.label}
                  {i.badge && (
                    <span class="badge warn nav-count" data-testid="nav-count">
                      {i.badge}
                      <span class="visually-hidden"> waiting</span>
                    </span>
                  )}
                </a>
              </li>
            ))}
          {adminItems.length > 0 && (
            <li>
              <details class={inAdmin ? 'dropdown current' : 'dropdown'} data-testid="admin-menu">
                <summary>Administration</summary>
                <ul dir="rtl">
                  {adminItems.map((i) => (
                    <li key={i.href}>
                      <a href={i.href} dir="ltr" aria-current={current(i.href) ? 'page' : undefined} onClick={closeMenu}>
                        {i.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </details>
            </li>
          )}
          <li>
            <details class="dropdown user-menu">
              <summary>{user.displayName}</summary>
              <ul dir="rtl">
                <li>
                  <a href="/account" onClick={closeMenu}>
                    Account &amp; security
                  </a>
                </li>
                <li>
                  <a
                    href="#sign-out"
                    onClick={(e) => {
                      e.preventDefault();
                      closeMenu(e);
                      void signOut();
                    }}
                  >
                    Sign out
                  </a>
                </li>
              </ul>
            </details>
          </li>
        </ul>
      </nav>
    </header>
  );
}
