// What the spec's patterns and string formats ask for, in words: a validation message never prints a
// regular expression. A pattern added to the spec without words here gets the generic sentence
// (test/validation-messages.test.ts lists any such pattern).

/** The words for each pattern in the spec, by the pattern's source as the spec writes it. */
const PATTERN_WORDS: ReadonlyMap<string, string> = new Map([
  ['^\\+[1-9][0-9]{6,14}$', 'must be an E.164 number: a + followed by 7 to 15 digits, the first not 0'],
  [
    '^[a-z]{2}-[A-Z]{2}$',
    'must be a language tag: two lower-case letters, a hyphen and two capital letters, like en-IN',
  ],
  ['^[\\x21-\\x7E]+$', 'must be printable ASCII characters, without spaces'],
  ['^[a-z][a-z0-9_]*$', 'must be a lower-case letter followed by lower-case letters, digits or underscores'],
  ['^[a-z0-9_]+$', 'must be lower-case letters, digits or underscores'],
  ['^https://', 'must be an https URL (starting with https://)'],
  ['^[0-9a-f]{64}$', 'must be 64 lower-case hexadecimal digits'],
  ['^[0-9]{13}$', 'must be 13 digits (milliseconds since 1970-01-01 UTC)'],
  [
    '^t=[0-9]{13}(,v1=[0-9a-f]{64})+$',
    'must be t=<13 digits> followed by one or more ,v1=<64 lower-case hexadecimal digits>',
  ],
  ['^req_[0-9a-f]{16}$', 'must be a request id: req_ followed by 16 lower-case hexadecimal digits'],
  ['^evt_[0-9a-zA-Z]{24}$', 'must be an event id: evt_ followed by 24 letters or digits'],
  ['^([01][0-9]|2[0-3]):[0-5][0-9]$', 'must be a time of day as HH:MM in 24-hour form, from 00:00 to 23:59'],
  [
    '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$',
    'must be a time of day as HH:MM in 24-hour form, from 00:00 to 24:00 (the end of the day)',
  ],
  ['\\S', 'must hold at least one character that is not white space'],
  [
    '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
    'must be an IANA time zone name, like Asia/Kolkata or America/New_York',
  ],
]);

/** The words for each string format the spec uses, by the format's name. */
const FORMAT_WORDS: ReadonlyMap<string, string> = new Map([
  ['uuid', 'must be a UUID, like 123e4567-e89b-12d3-a456-426614174000'],
  ['date-time', 'must be a date and time with its offset (RFC 3339), like 2026-11-26T09:41:00Z'],
  ['email', 'must be an email address, like name@example.com'],
  ['uri', 'must be an absolute URL, like https://example.com/hooks'],
  ['int32', 'must be a whole number from -2147483648 to 2147483647'],
  ['int64', 'must be a whole number from -9223372036854775808 to 9223372036854775807'],
]);

/** Whether a pattern has words of its own (the rest get the generic sentence). */
export function patternHasWords(pattern: string): boolean {
  return PATTERN_WORDS.has(pattern);
}

/** What a value failing `pattern` should have been, in words. */
export function patternWords(pattern: string): string {
  return PATTERN_WORDS.get(pattern) ?? 'is not in the form this field expects (see the API reference)';
}

/** What a value failing the string format `format` should have been, in words. */
export function formatWords(format: string): string {
  return FORMAT_WORDS.get(format) ?? `must be in the ${format} format`;
}
