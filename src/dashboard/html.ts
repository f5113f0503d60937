// The one way pages are written: a tagged template that escapes every interpolated value with
// escape-html, unless it is markup this module made (another html`...` or a list of them).
import escapeHtml from 'escape-html';

/** Markup that is safe to send as-is: built by `html` from escaped values. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What may be interpolated: text (escaped), numbers, markup, lists of these, or nothing (null, undefined, false). */
export type HtmlValue = SafeHtml | string | number | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Builds markup from a template, escaping every value (attribute values must be quoted in the template). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}
