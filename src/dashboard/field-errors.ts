// A refused form comes back as it was sent, with the refusal written under the field it is about:
// the field is marked invalid and names its help and its error, so a screen reader reads both, and the
// alert at the top of the page links to it.
import { DomainError } from '../errors.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';
import { notice } from './layout.js';
import { outside } from './outside-text.js';

/** What a form was refused for: the id of the field it is about, and what to put right. */
export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * The field problem an invalid_request refusal makes on a form whose fields are `ids` (the API's
 * parameter names): the field its `param` names or lies under (`events[2]` is `events`), the first
 * field otherwise; null for any other error, which the caller rethrows.
 */
export function fieldProblemOf(error: unknown, ids: readonly [string, ...string[]]): FieldProblem | null {
  if (!(error instanceof DomainError) || error.code !== 'invalid_request') return null;
  const param = error.param ?? '';
  const field = ids.find((id) => param === id || param.startsWith(`${id}[`) || param.startsWith(`${id}.`)) ?? ids[0];
  const message = error.details?.[param]?.[0] ?? error.message;
  return { field, message };
}

/** The attributes of a field: the ids of its help and (when refused) its error, and whether it is refused. */
export function fieldAttributes(id: string, problem: FieldProblem | null, help?: string): SafeHtml {
  const refused = problem?.field === id;
  const ids = [help, refused ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${refused ? html` aria-invalid="true"` : ''}`;
}

/** The attributes of a group of fields (a fieldset): it names its error, as a group cannot be marked invalid. */
export function groupAttributes(id: string, problem: FieldProblem | null): SafeHtml | '' {
  return problem?.field === id ? html` aria-describedby="${id}-error"` : '';
}

/** The refusal written under field `id`, when it is about that field. */
export function fieldError(id: string, problem: FieldProblem | null): HtmlValue {
  return problem?.field === id ? html`<p id="${id}-error" class="field-error">${outside(problem.message)}</p>` : '';
}

/** The alert at the top of a refused form's page: what was not done, and a link to the field at fault. */
export function refusedNotice(notDone: string, problem: FieldProblem): SafeHtml {
  return notice('error', html`${notDone}: <a href="#${problem.field}">see below</a>.`);
}
