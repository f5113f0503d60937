// Whether a new password is acceptable: its length, and how easy it is to guess by zxcvbn-ts with the
// lists its packages ship (tens of thousands of common and breached passwords, English words and names,
// keyboard patterns), all offline.
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as english from '@zxcvbn-ts/language-en';
import { invalidField } from '../errors.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, MIN_PASSWORD_SCORE, PASSWORD_CHECK_LENGTH } from './policy.js';

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
function guessableBecause(password: string, personal: string[]): string | null {
  const result = passwordEstimator().check(password, personal);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const reasons = [result.feedback.warning, ...result.feedback.suggestions].filter(Boolean);
  return reasons.length > 0 ? reasons.join(' ') : 'Add more words that are less common.';
}

/** The fewest letters or digits a password must keep once the `personal` words in it are taken out. */
const MIN_OWN_CHARACTERS = 6;

/**
 * Whether `password` is little more than `personal` words (an email's parts: `admin2x.example!!` for
 * admin2@x.example): what is left once every such word of 3 characters or more, and every character
 * other than a letter or a digit, is taken out is shorter than MIN_OWN_CHARACTERS. zxcvbn weighs each
 * personal word it finds, but scores several joined by separators as hard enough.
 */
function builtOnPersonal(password: string, personal: string[]): boolean {
  const words = personal.map((word) => word.toLowerCase()).filter((word) => word.length >= 3);
  if (words.length === 0) return false;
  let rest = password.toLowerCase();
  for (const word of words.sort((a, b) => b.length - a.length)) rest = rest.split(word).join(' ');
  return rest.replace(/[^\p{L}\p{N}]/gu, '').length < MIN_OWN_CHARACTERS;
}

/**
 * Throws invalid_request (param password) unless the password is long enough, not one character
 * repeated, and hard to guess (not a common or breached-style password, nor built on `personal` words
 * such as the person's email); the message says why.
 */
export function checkPassword(password: string, personal: string[] = []): void {
  // Counted in code points of the form that is hashed (NFC): most emoji are one, not two UTF-16 units,
  // and an accented letter is one however it was typed.
  const characters = [...password.normalize('NFC')];
  if (characters.length < MIN_PASSWORD_LENGTH) {
    throw invalidField('password', `must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (new Set(characters).size === 1) throw invalidField('password', 'must not be one character repeated');
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw invalidField('password', `must have at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  const normalized = password.normalize('NFC');
  if (builtOnPersonal(normalized, personal)) {
    throw invalidField('password', 'is too easy to guess. It is built on your email address; add words of your own.');
  }
  const because = guessableBecause(normalized, personal);
  if (because) throw invalidField('password', `is too easy to guess. ${because}`);
}
