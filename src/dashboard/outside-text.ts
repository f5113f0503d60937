// Text from outside the dashboard (contact names, metadata, URLs, receivers' answers, emails, labels)
// as pages show it: isolated from the text around it, so right-to-left text cannot reorder the page,
// and with control and bidi-control characters shown as their code points instead of acting. The
// stored text is not changed; only how it is drawn.
import { html, type SafeHtml } from './html.js';
import { LONG_WORD_CHARS } from './policy.js';

/**
 * C0 and C1 controls (a tab, a line feed and the carriage return of a CRLF stay, for excerpts), DEL,
 * and the bidi controls: LRM, RLM, ALM, the embeddings and overrides U+202A–U+202E, and the isolates
 * U+2066–U+2069.
 */
const HIDDEN_CHARACTERS =
  /([\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\r(?!\n))/u;

const LONG_WORD = new RegExp(`\\S{${LONG_WORD_CHARS + 1}}`, 'u');

/** A character's code point as written in a badge or a title: `U+202E`. */
function codePointOf(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A control character drawn as its code point in a badge: `<U+202E>`. */
function badge(character: string): SafeHtml {
  return html`<span class="control">&lt;${codePointOf(character)}&gt;</span>`;
}

/**
 * Outside text, isolated (`<bdi>`), with its control characters visible; marked `long` (may break
 * anywhere) when it holds a word longer than LONG_WORD_CHARS. Empty markup for none.
 */
export function outside(text: string | null | undefined): SafeHtml {
  if (text === null || text === undefined || text === '') return html``;
  // split with a capturing group puts each control character at the odd positions.
  const parts = text.split(HIDDEN_CHARACTERS).map((part, index) => (index % 2 === 1 ? badge(part) : part));
  return html`<bdi${LONG_WORD.test(text) ? html` class="long"` : ''}>${parts}</bdi>`;
}

/** Outside text where no markup can go (a page's title): control characters written as `<U+202E>`. */
export function outsidePlain(text: string): string {
  return text.replace(new RegExp(HIDDEN_CHARACTERS.source, 'gu'), (character) => `<${codePointOf(character)}>`);
}

/** Outside text that keeps its line breaks (a receiver's answer, JSON), as a block. */
export function outsideBlock(text: string | null | undefined): SafeHtml {
  return html`<pre>${outside(text)}</pre>`;
}
