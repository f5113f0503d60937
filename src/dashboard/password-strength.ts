// How easy a new password is to guess, by zxcvbn-ts with the lists its packages ship (tens of thousands
// of common and breached passwords, English words and names, keyboard patterns), all offline.
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';
import { MIN_PASSWORD_SCORE, PASSWORD_CHECK_LENGTH } from './policy.js';

let estimator: ZxcvbnFactory | undefined;

/** The estimator, built on first use: loading its lists takes most of a second, so not at start-up. */
function passwordEstimator(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
    maxLength: PASSWORD_CHECK_LENGTH,
  });
  return estimator;
}

/**
 * Why `password` is too easy to guess (zxcvbn's warning and advice, in English), or null when it is
 * hard enough. `personal` are words an attacker would try first for this person, such as their email.
 */
export function guessableBecause(password: string, personal: string[]): string | null {
  const result = passwordEstimator().check(password, personal);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const reasons = [result.feedback.warning, ...result.feedback.suggestions].filter(Boolean);
  return reasons.length > 0 ? reasons.join(' ') : 'Add more words that are less common.';
}
