import { useTitle } from '../ui';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <section>
      <h1>Nothing here</h1>
      <p>
        This page does not exist, or your role cannot open it. <a href="/">Back to the overview</a>.
      </p>
    </section>
  );
}
