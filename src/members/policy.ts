// The members feature's limits and lifetimes: one-time links, passwords, sign-in limits, the sign-in
// hash pool and sessions, named in one place.

/** How long an invite or reset link works. */
export const LINK_LIFETIME_MS = 72 * 60 * 60 * 1000;
/** The shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 12;
/** The longest password accepted (scrypt reads it all; this bounds the work one request can ask for). */
export const MAX_PASSWORD_LENGTH = 1024;
/** The window failed sign-ins are counted in. */
export const SIGN_IN_FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins allowed for one account from one client address within the window. */
export const SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS = 10;
/** Failed sign-ins allowed from one client address, whatever the accounts, within the window. */
export const SIGN_IN_FAILURES_PER_ADDRESS = 50;
/**
 * Failed sign-ins allowed for one account from all addresses together within the window: a last resort
 * against a spread-out guesser, far above what failures from elsewhere reach by accident (audited when hit).
 */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 1000;
/**
 * Sign-in password hashes that run at once in one process: each takes a core for over a hundred
 * milliseconds, and one at a time leaves the event loop and the database a core on a 2-core machine.
 */
export const SIGN_IN_HASHES_AT_ONCE = 1;
/** Sign-in password hashes that may wait for a turn in one process; more are refused at once. */
export const SIGN_IN_HASHES_WAITING = 4;
/** The longest a sign-in may expect to wait for a hashing turn before it is refused at once instead. */
export const SIGN_IN_HASH_MAX_WAIT_MS = 1000;
/** Sign-in password hashes one client address may have running or waiting at a time. */
export const SIGN_IN_HASHES_PER_ADDRESS = 2;
/** Threads that hash passwords in one process: as many as sign-in hashes that run at once. */
export const HASH_THREADS = SIGN_IN_HASHES_AT_ONCE;
/**
 * How much lower than the process's the hashing threads' scheduling priority is (Linux nice): under
 * contention the event loop and the database come first, and a hash still gets a share of a busy core.
 */
export const HASH_THREAD_NICE_INCREMENT = 10;
/** Sign-in posts that go on per turn of the event loop; the rest wait for the following turns. */
export const SIGN_IN_POSTS_PER_TURN = 2;
/** What a sign-in refused for want of a hashing turn is told to wait (Retry-After), in seconds. */
export const SIGN_IN_BUSY_RETRY_AFTER_SEC = 1;
/** The lowest zxcvbn score (0 to 4) a new password needs: 3 is "safely unguessable" against slow hashes. */
export const MIN_PASSWORD_SCORE = 3;
/** How many leading characters of a password the strength check reads (its work grows with the length). */
export const PASSWORD_CHECK_LENGTH = 100;
/**
 * The most orgs one email's memberships are looked for in (each membership has its own password, so a
 * wrong one costs a hash per membership); memberships beyond the oldest this many cannot sign in.
 */
export const MAX_ORGS_PER_EMAIL = 5;
/**
 * A session's last-seen time is written at most this often, or a tenth of the idle timeout when that is
 * shorter (the idle timeout's resolution: a session never ends more than that early).
 */
export const SESSION_TOUCH_MS = 60 * 1000;

/**
 * The last-admin rule's count: the members other than `exceptId` who are admins able to sign in (with a
 * password set). A removal or reset reports it, so whoever made the change learns when none is left.
 */
export function adminsWhoCanSignIn(
  members: readonly { id: string; role: string; password_hash: string | null }[],
  exceptId: string,
): number {
  return members.filter((member) => member.id !== exceptId && member.role === 'admin' && member.password_hash !== null)
    .length;
}
