// The dashboard's limits and lifetimes, in one place.

/** How long an invite or reset link works. */
export const LINK_LIFETIME_MS = 72 * 60 * 60 * 1000;
/** The shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 12;
/** The longest password accepted (scrypt reads it all; this bounds the work one request can ask for). */
export const MAX_PASSWORD_LENGTH = 1024;
/** The window failed sign-ins are counted in. */
export const SIGN_IN_FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins allowed per account, and per client address, within the window. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 50;
/** A session's last-seen time is written at most this often (the idle timeout's resolution). */
export const SESSION_TOUCH_MS = 60 * 1000;
/** How many delivery attempts an endpoint page shows (the spec's delivery log). */
export const DELIVERY_LOG_SIZE = 100;
/** Rows per page of the calls and contacts lists. */
export const PAGE_SIZE = 50;
/** How many audit entries the audit page shows. */
export const AUDIT_PAGE_SIZE = 200;
/** The longest CSV accepted from the contacts page's form, in bytes. */
export const MAX_CSV_BYTES = 2 * 1024 * 1024;
/**
 * Outside text with a run of more characters than this without a space (an id, a URL, a long email)
 * may break anywhere; shorter words are never broken, so table columns keep them whole.
 */
export const LONG_WORD_CHARS = 30;
