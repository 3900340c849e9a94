/** Releases and deployments share one "Updates" entry (Administration menu); this switches between them. */
export function UpdatesNav({ current }: { current: 'releases' | 'deployments' }) {
  const tabs = [
    ['releases', '/updates', 'Releases'],
    ['deployments', '/updates/deployments', 'Deployments'],
  ] as const;
  return (
    <nav aria-label="Player updates" class="sub-nav">
      <ul>
        {tabs.map(([key, href, label]) => (
          <li key={key}>
            <a href={href} aria-current={key === current ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
