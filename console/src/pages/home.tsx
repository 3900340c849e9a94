import { atLeast } from '../api';
import { useSession, useTitle } from '../ui';

/** The landing page: where to go next. Grows as the screens, library and schedules pages land. */
export function HomePage() {
  useTitle('Overview');
  const { user } = useSession();
  return (
    <>
      <hgroup>
        <h1>Hello, {user.displayName}</h1>
        <p>Your Placard server</p>
      </hgroup>
      <div class="cards">
        <article>
          <header>
            <h2>Your account</h2>
          </header>
          <p>Protect your sign-in with an authenticator app, a passkey and recovery codes.</p>
          <a href="/account" role="button" class="outline">
            Account &amp; security
          </a>
        </article>
        {atLeast(user, 'admin') && (
          <article>
            <header>
              <h2>People</h2>
            </header>
            <p>Invite colleagues as editors, publishers or admins.</p>
            <a href="/users" role="button" class="outline">
              Users
            </a>
          </article>
        )}
      </div>
    </>
  );
}
