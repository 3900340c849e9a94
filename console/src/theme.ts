/** Light/dark: 'system' follows the browser (prefers-color-scheme); the choice is the user's preference. */
export type Theme = 'system' | 'light' | 'dark';

export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (theme === 'light' || theme === 'dark') root.dataset.theme = theme;
  else delete root.dataset.theme;
  try {
    if (theme === 'system') localStorage.removeItem('placard.theme');
    else localStorage.setItem('placard.theme', theme);
  } catch {
    /* private mode: the preference still applies for this page */
  }
}
