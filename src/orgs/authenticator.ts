// Bearer API-key authentication. Found keys are cached for a short time (the bound on how long a revoked
// key or a changed plan goes unnoticed); unknown keys are remembered apart, in a bounded cache that never
// pushes out a valid key. Failed authentications are counted per client address in the database, so all
// API processes share one allowance; an address over it gets no lookups of made-up keys until its
// allowance refills. A key that exists is still looked up (a key that worked here lately, or one whose
// prefix is among the active keys, a list reloaded at most every 30 s while some address is over its
// allowance): a flood of made-up keys from the same address (every client behind one proxy) never
// locks a valid key out, on any process, after a restart too.
import { LRUCache } from 'lru-cache';
import type { Db } from '../database/connect.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { parseApiKey, secretMatches } from './api-keys.js';
import { findKeyByPrefix, listActiveKeyPrefixes, markKeyUsed, type KeyLookup } from './api-key-queries.js';
import { deleteFullAllowances, spendAuthFailure } from './auth-failure-queries.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from './policy.js';
import { isLive } from './modes.js';

type ParsedKey = NonNullable<ReturnType<typeof parseApiKey>>;

/**
 * An LRU cache of at most `entries` entries whose storage grows with its contents. lru-cache allocates
 * storage for all of `max` entries when it is built (several MB at these bounds, in every process);
 * bounding the total size instead, each entry counting 1, keeps the same bound without that.
 */
function growingCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  entries: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 });
}

/** Who is calling: the org every query of the request is scoped to, and the mode its key is of. */
export interface AuthContext {
  /** The org whose data the request reads and writes: the live org, or its test twin for a test key. */
  orgId: string;
  /** The live org the key belongs to: its agents serve both modes. */
  accountOrgId: string;
  /** Whether the key is a live key; a test key's calls only ever reach the simulator. */
  livemode: boolean;
  keyPrefix: string;
  planId: string | null;
  rateLimitPerMinute: number;
}

/** Keys kept in the cache of found keys; far above the number of keys a deployment has in use. */
const KNOWN_KEYS = 100_000;
/** Unknown key prefixes remembered; the oldest are forgotten first. */
const UNKNOWN_KEYS = 20_000;
/** Client addresses whose allowance this process remembers; the quietest are forgotten first. */
const COUNTED_ADDRESSES = 50_000;
/** Key prefixes that authenticated successfully lately, looked up even from an address out of failures. */
const RECENTLY_VALID_KEYS = 100_000;
/** How long a key that worked stays exempt from its address's allowance without working again. */
const RECENTLY_VALID_MS = 24 * 60 * 60 * 1000;
/** A key's last use is written at most this often from one process (the dashboard shows it to the minute). */
const USE_MARK_INTERVAL_MS = 60_000;
/**
 * How long the list of active key prefixes is reused: for a prefix it holds, 30 s (a key revoked since is
 * refused by its lookup); for one it lacks (a key made since, or a made-up one), 1 s, so a flood of
 * made-up keys costs at most one read of the list a second.
 */
const ACTIVE_PREFIXES_TTL_MS = 30_000;
const ACTIVE_PREFIXES_MISS_TTL_MS = 1_000;

/** Settings of the authenticator. */
export interface AuthenticatorOptions {
  /** How long a key lookup is reused (0: never). */
  cacheTtlMs: number;
  /** Failed authentications one address may make per minute. */
  failuresPerMinute: number;
}

/** A client address's allowance of failed authentications in this process's view (see countFailure): a token bucket. */
interface Allowance {
  tokens: number;
  at: number;
}

/** Resolves Authorization headers to orgs. */
export class ApiKeyAuthenticator {
  private readonly known: LRUCache<string, KeyLookup> | null;
  private readonly unknown: LRUCache<string, true> | null;
  private readonly allowances: LRUCache<string, Allowance>;
  private readonly recentlyValid: LRUCache<string, true>;
  /** When this process last wrote each key's last use. */
  private readonly usesMarked = growingCache<string, number>(KNOWN_KEYS);
  /** The prefixes of the active keys, read when an address is over its allowance. */
  private activePrefixes: { at: number; prefixes: Promise<Set<string>> } | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: AuthenticatorOptions,
  ) {
    const perf = { now: () => clock.now().getTime() };
    const ttl = options.cacheTtlMs;
    this.known = ttl > 0 ? growingCache(KNOWN_KEYS, { ttl, perf }) : null;
    this.unknown = ttl > 0 ? growingCache(UNKNOWN_KEYS, { ttl, perf }) : null;
    this.allowances = growingCache(COUNTED_ADDRESSES);
    this.recentlyValid = growingCache(RECENTLY_VALID_KEYS, { ttl: RECENTLY_VALID_MS, perf });
  }

  /**
   * The caller's context, or null for a missing, malformed, unknown or revoked key. Throws DomainError
   * too_many_requests when `address` has used up its failed authentications and the key is not one that
   * worked lately; database errors propagate.
   */
  async authenticate(authorization: string | undefined, address: string): Promise<AuthContext | null> {
    const parsed = parseBearer(authorization);
    const cached = parsed ? this.known?.get(parsed.prefix) : undefined;
    if (parsed && cached && isValid(cached, parsed)) return this.accepted(cached, parsed.prefix);
    const exempt =
      parsed !== null &&
      (this.recentlyValid.has(parsed.prefix) ||
        (this.allowanceOf(address).tokens < 1 && (await this.isActivePrefix(parsed.prefix))));
    // Spent here, before any wait, so that requests in flight together cannot all pass one last token.
    if (!exempt) this.takeLocally(address);
    try {
      const lookup = parsed ? await this.lookup(parsed.prefix) : undefined;
      if (parsed && lookup && isValid(lookup, parsed)) {
        if (!exempt) this.giveBackLocally(address);
        return this.accepted(lookup, parsed.prefix);
      }
      await this.countFailure(address);
    } catch (error) {
      // The database failed before the failure was counted there: the token is not spent.
      if (!exempt) this.giveBackLocally(address);
      throw error;
    }
    return null;
  }

  /** Whether `prefix` is an active key's, from the list of active prefixes (see ACTIVE_PREFIXES_TTL_MS). */
  private async isActivePrefix(prefix: string): Promise<boolean> {
    const current = this.activePrefixes;
    const age = current ? this.clock.now().getTime() - current.at : Infinity;
    if (current && age <= ACTIVE_PREFIXES_TTL_MS && (await current.prefixes).has(prefix)) return true;
    if (current && age <= ACTIVE_PREFIXES_MISS_TTL_MS) return false;
    const loading = listActiveKeyPrefixes(this.db).then((prefixes) => new Set(prefixes));
    this.activePrefixes = { at: this.clock.now().getTime(), prefixes: loading };
    // A failed read is not kept: the next request reads again (and this one fails as a lookup would).
    loading.catch(() => (this.activePrefixes = null));
    return (await loading).has(prefix);
  }

  /**
   * The context of a valid key, having noted that it worked (for its address's allowance) and its use:
   * written in the background at most once a minute per key, so the request never waits for it. A
   * failed write is dropped; the next use a minute later writes again, and "last used" is only shown.
   */
  private accepted(lookup: KeyLookup, prefix: string): AuthContext {
    this.recentlyValid.set(prefix, true);
    const now = this.clock.now();
    const marked = this.usesMarked.get(prefix);
    if (marked === undefined || now.getTime() - marked >= USE_MARK_INTERVAL_MS) {
      this.usesMarked.set(prefix, now.getTime());
      // A failed write keeps the mark: the next try is a minute later, not on the next request.
      markKeyUsed(this.db, prefix, now).catch(() => undefined);
    }
    return contextOf(lookup, prefix);
  }

  private async lookup(prefix: string): Promise<KeyLookup | undefined> {
    if (this.unknown?.has(prefix)) return undefined;
    const lookup = this.known?.get(prefix) ?? (await findKeyByPrefix(this.db, prefix));
    if (lookup) this.known?.set(prefix, lookup);
    else this.unknown?.set(prefix, true);
    return lookup;
  }

  /** The allowance of `address` now, refilled locally since the database last reported it (full if unknown). */
  private allowanceOf(address: string): Allowance {
    const now = this.clock.now().getTime();
    const perMinute = this.options.failuresPerMinute;
    const last = this.allowances.get(address);
    if (!last) return { tokens: perMinute, at: now };
    return { tokens: Math.min(perMinute, last.tokens + ((now - last.at) * perMinute) / 60_000), at: now };
  }

  /** Takes one failure of the address's allowance in this process's view, or refuses it with 429 when none is left. */
  private takeLocally(address: string): void {
    const allowance = this.allowanceOf(address);
    if (allowance.tokens >= 1) {
      this.allowances.set(address, { tokens: allowance.tokens - 1, at: allowance.at });
      return;
    }
    const waitS = Math.max(1, Math.ceil(((1 - allowance.tokens) * 60) / this.options.failuresPerMinute));
    throw new DomainError(
      'too_many_requests',
      `Too many failed authentications from this address; retry in ${waitS} ${waitS === 1 ? 'second' : 'seconds'} with a valid API key.`,
      { headers: { 'Retry-After': String(waitS) } },
    );
  }

  /** Gives back the failure takeLocally took, for a request whose key turned out valid. */
  private giveBackLocally(address: string): void {
    const allowance = this.allowanceOf(address);
    this.allowances.set(address, {
      tokens: Math.min(this.options.failuresPerMinute, allowance.tokens + 1),
      at: allowance.at,
    });
  }

  /**
   * Spends one of the address's failures in the database and remembers what is left of its allowance:
   * the lower of the database's count (which knows other processes' failures) and this process's (which
   * knows the failures still on their way to the database), so an early answer never hands back tokens
   * that requests in flight have already taken.
   */
  private async countFailure(address: string): Promise<void> {
    const spent = await spendAuthFailure(this.db, address, this.options.failuresPerMinute, this.clock.now().getTime());
    const local = this.allowanceOf(address);
    this.allowances.set(address, { tokens: Math.min(spent.tokens, local.tokens), at: local.at });
  }
}

function parseBearer(authorization: string | undefined): ParsedKey | null {
  if (!authorization) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  return match ? parseApiKey(match[1]!) : null;
}

/** Whether the key is active, of the mode it says, with the right secret. */
function isValid(lookup: KeyLookup, key: ParsedKey): boolean {
  return !lookup.revoked && lookup.livemode === isLive(key.mode) && secretMatches(key.secret, lookup.secretHash);
}

function contextOf(lookup: KeyLookup, prefix: string): AuthContext {
  return {
    orgId: lookup.orgId,
    accountOrgId: lookup.accountOrgId,
    livemode: lookup.livemode,
    keyPrefix: prefix,
    planId: lookup.planId,
    rateLimitPerMinute: lookup.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
  };
}

/** Removes the failed-authentication allowances that have refilled completely by `nowMs`; returns how many. */
export function pruneAuthFailureAllowances(db: Db, nowMs: number): Promise<number> {
  return deleteFullAllowances(db, nowMs);
}
