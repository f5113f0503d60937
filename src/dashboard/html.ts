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

/** Unicode's explicit direction controls: an override or embedding reorders the text that follows it. */
const DIRECTION_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * Escapes text; text holding direction controls is also put in a first-strong isolate (U+2068 … U+2069),
 * which ends whatever they start, so a name cannot reverse the words of the page around it.
 */
function escapeText(text: string): string {
  const escaped = escapeHtml(text);
  return DIRECTION_CONTROLS.test(text) ? `\u2068${escaped}\u2069` : escaped;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeText(String(value));
}

/** Builds markup from a template, escaping every value (attribute values must be quoted in the template). */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i += 1) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}
