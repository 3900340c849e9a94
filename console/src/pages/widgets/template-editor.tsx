import { useId, useRef } from 'preact/hooks';
import type { WidgetError } from './model';

/**
 * A custom widget's Liquid template: a textarea with line numbers beside it. The compiler's
 * errors mark their line in the gutter and are listed below as "line:column message"; each
 * entry puts the cursor at its place.
 */
export function TemplateEditor({
  value,
  onChange,
  errors,
  disabled,
}: {
  value: string;
  onChange: (next: string) => void;
  errors: WidgetError[];
  disabled?: boolean;
}) {
  const id = useId();
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = value.split('\n').length;
  const bad = new Map<number, string>();
  for (const e of errors) if (e.line && !bad.has(e.line)) bad.set(e.line, e.message);
  const goTo = (e: WidgetError) => {
    const el = area.current;
    if (!el || !e.line) return;
    const all = el.value.split('\n');
    let at = 0;
    for (let i = 0; i < Math.min(e.line - 1, all.length); i++) at += all[i]!.length + 1;
    at += Math.max(0, (e.column ?? 1) - 1);
    el.focus();
    el.setSelectionRange(at, at);
  };
  return (
    <div class="template-editor">
      <label for={id}>
        Template (Liquid: HTML with {'{{ … }}'} and {'{% … %}'})
      </label>
      <div class={`code-box${errors.length ? ' has-errors' : ''}`}>
        <div class="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: Math.max(lines, 1) }, (_, i) => (
            <div key={i} class={bad.has(i + 1) ? 'bad' : undefined} data-line={i + 1} title={bad.get(i + 1)}>
              {bad.has(i + 1) ? '⚠ ' : ''}
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          ref={area}
          class="code"
          spellcheck={false}
          autocapitalize="off"
          autocomplete="off"
          wrap="off"
          rows={Math.min(Math.max(lines + 1, 8), 24)}
          disabled={disabled}
          value={value}
          aria-invalid={errors.length ? true : undefined}
          aria-describedby={errors.length ? `${id}-errors` : undefined}
          onInput={(e) => onChange(e.currentTarget.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {errors.length > 0 && (
        <div role="alert" class="template-errors" id={`${id}-errors`} data-testid="template-errors">
          <strong>
            {errors.length === 1 ? 'The template has a mistake' : `The template has ${errors.length} mistakes`}; it cannot be saved until it is fixed.
          </strong>
          <ul>
            {errors.map((e, i) => (
              <li key={i} data-line={e.line ?? undefined}>
                {e.line ? (
                  <button type="button" class="link-button" onClick={() => goTo(e)}>
                    Line {e.line}
                    {e.column ? `:${e.column}` : ''}
                  </button>
                ) : null}{' '}
                {e.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
