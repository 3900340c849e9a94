/**
 * The locale the console writes dates, times and numbers in: the user's own preference
 * (`/me/preferences` locale), else the server's default (`settings.locale`, set on the
 * Settings page), else the browser's. See docs/console.md.
 */
let userLocale: string | null = null;
let serverLocale: string | null = null;

export function setUserLocale(locale: string | null | undefined): void {
  userLocale = locale ?? null;
}
export function setServerLocale(locale: string | null | undefined): void {
  serverLocale = locale ?? null;
}
/** `undefined` means the browser's own (what Intl takes for "default"). */
export function displayLocale(): string | undefined {
  return userLocale ?? serverLocale ?? undefined;
}
