// Applies the saved light/dark choice before the first paint (no flash of the wrong theme).
// A file rather than an inline script, so the console's Content-Security-Policy can forbid inline scripts.
try {
  const t = localStorage.getItem('placard.theme');
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
} catch {
  // no storage (private mode): the default theme
}
