// The pieces of the network guard and the receiver's verification, checked on their own: the address
// policy, the URL check with an injected resolver, the connect-time guard, and verifySignature.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addressRefusal, parseAllowlist } from '../src/webhooks/delivery/address-policy.js';
import { classifyError, describeError } from '../src/webhooks/delivery/failure.js';
import { createGuardedAgent } from '../src/webhooks/delivery/guarded-agent.js';
import { postDelivery } from '../src/webhooks/delivery/send.js';
import { signatureHeader } from '../src/webhooks/delivery/signature.js';
import { assertDeliverableUrl, type Resolver } from '../src/webhooks/delivery/url-guard.js';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { nextAttemptAt, parseRetryAfter } from '../src/webhooks/policy.js';

const none = parseAllowlist([]);

describe('addressRefusal', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /metadata/],
    ['169.254.1.1', /link-local/],
    ['100.64.0.1', /carrier-grade/],
    ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['239.1.1.1', /multicast/],
    ['192.0.2.1', /reserved/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fc00::1', /unique-local/],
    ['fd00:ec2::254', /metadata/],
    ['ff02::1', /multicast/],
    ['::ffff:10.0.0.1', /private/],
    ['::a00:1', /IPv4-compatible/],
    ['64:ff9b::a00:1', /non-public/],
    ['2002:a00:1::1', /non-public/],
    ['not-an-ip', /not an IP/],
  ])('refuses %s', (address, reason) => {
    expect(addressRefusal(address, none)).toMatch(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])('allows the public address %s', (address) => {
    expect(addressRefusal(address, none)).toBeNull();
  });

  it('lets the allowlist exempt ranges, and only those', () => {
    const allowlist = parseAllowlist(['127.0.0.0/8', 'fd12::/16']);
    expect(addressRefusal('127.0.0.5', allowlist)).toBeNull();
    expect(addressRefusal('::ffff:127.0.0.1', allowlist)).toBeNull();
    expect(addressRefusal('fd12::1', allowlist)).toBeNull();
    expect(addressRefusal('10.0.0.1', allowlist)).toMatch(/private/);
    expect(addressRefusal('::1', allowlist)).toMatch(/loopback/);
  });

  it('rejects an allowlist entry that is not a CIDR range', () => {
    expect(() => parseAllowlist(['10.0.0.0/99'])).toThrow(/not a valid CIDR/);
  });
});

describe('assertDeliverableUrl with an injected resolver', () => {
  const resolver =
    (table: Record<string, string[]>): Resolver =>
    (host) => {
      const found = table[host];
      if (!found) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
      return Promise.resolve(found);
    };

  it('refuses a name when any of its addresses is non-public', async () => {
    const resolve = resolver({ 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'meta.example': ['169.254.169.254'] });
    await expect(assertDeliverableUrl('https://mixed.example/x', none, resolve)).rejects.toThrow(
      /resolves to 10\.0\.0\.7, a private address/,
    );
    await expect(assertDeliverableUrl('https://meta.example/x', none, resolve)).rejects.toThrow(/cloud metadata/);
    await expect(assertDeliverableUrl('https://unknown.example/x', none, resolve)).rejects.toThrow(/does not resolve/);
  });

  it('accepts a name whose addresses are all public', async () => {
    const resolve = resolver({ 'crm.example': ['93.184.216.34', '2606:4700:4700::1111'] });
    await expect(assertDeliverableUrl('https://crm.example/hooks', none, resolve)).resolves.toBeUndefined();
  });

  it('refuses localhost by name whatever the allowlist says', async () => {
    const allowAll = parseAllowlist(['0.0.0.0/0', '::/0']);
    await expect(assertDeliverableUrl('https://LOCALHOST./x', allowAll)).rejects.toThrow(/localhost/);
  });
});

describe('the connect-time guard', () => {
  it('refuses a host name resolving to loopback and an IP literal before connecting', async () => {
    const agent = createGuardedAgent({ allowlist: none, caCerts: [] });
    try {
      for (const url of ['https://localhost:8443/x', 'https://127.0.0.1:8443/x', 'https://[::1]:8443/x']) {
        const error = await postDelivery(agent, url, {}, '{}').then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(classifyError(error), url).toBe('guard');
      }
    } finally {
      await agent.destroy();
    }
  });
});

describe('postDelivery', () => {
  it('fails at once (not after the timeout), as a guard refusal, when fetch refuses the request before sending it', async () => {
    const agent = createGuardedAgent({ allowlist: parseAllowlist(['127.0.0.0/8']), caCerts: [] });
    try {
      const started = Date.now();
      // Port 9 is on fetch's "bad port" list: refused before the body is read.
      const error = await postDelivery(agent, 'https://127.0.0.1:9/x', {}, '{}').then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(classifyError(error)).toBe('guard');
      expect(describeError(error)).toBe("port 9 is on fetch's list of blocked ports; the request was not sent");
    } finally {
      await agent.destroy();
    }
  });

  it('refuses every bad port of the Fetch standard it is given, port 0 included, and no ordinary port', async () => {
    const agent = createGuardedAgent({ allowlist: parseAllowlist(['127.0.0.0/8']), caCerts: [] });
    try {
      for (const port of [0, 25, 6000, 10080]) {
        const error = await postDelivery(agent, `https://127.0.0.1:${port}/x`, {}, '{}').then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(classifyError(error), String(port)).toBe('guard');
      }
      // Port 2 is not on the list: the attempt reaches the network and the closed port refuses it.
      const ordinary = await postDelivery(agent, 'http://127.0.0.1:2/x', {}, '{}').then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(classifyError(ordinary)).toBe('connection_refused');
    } finally {
      await agent.destroy();
    }
  });
});

describe('verifySignature', () => {
  const secret = 'a'.repeat(64);
  const body = '{"id":"evt_x","event":"webhook.test"}';
  const now = 1_763_717_400_000;

  it('accepts a fresh delivery signed with any of the given secrets', () => {
    const header = signatureHeader([secret, 'b'.repeat(64)], now, body);
    expect(verifySignature(body, header, [secret], now + 1_000)).toEqual({ ok: true, timestampMs: now });
    expect(verifySignature(body, header, ['b'.repeat(64)], now).ok).toBe(true);
    expect(verifySignature(Buffer.from(body), header, [secret], now).ok).toBe(true);
  });

  it('matches an HMAC computed from scratch', () => {
    const v1 = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(verifySignature(body, `t=${now},v1=${v1}`, [secret], now).ok).toBe(true);
  });

  it.each([
    ['a changed body', body.replace('x', 'y'), signatureHeader([secret], now, body), now, /no v1 signature matches/],
    ['a stale timestamp', body, signatureHeader([secret], now, body), now + 300_001, /tolerance/],
    ['a future timestamp', body, signatureHeader([secret], now, body), now - 300_001, /tolerance/],
    ['no header', body, undefined, now, /missing/],
    ['no v1', body, `t=${now}`, now, /no v1/],
    ['a malformed t', body, 'v1=' + 'a'.repeat(64), now, /timestamp/],
  ])('rejects %s', (_name, rawBody, header, at, reason) => {
    const result = verifySignature(rawBody, header, [secret], at);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});

describe('the retry schedule', () => {
  it('spaces the retries and abandons after 7 attempts', () => {
    const at = new Date(0);
    const next = (
      attempts: number,
      retryAfterMs: number | null,
      kind: 'call.completed' | 'webhook.test' = 'call.completed',
    ) => nextAttemptAt(kind, attempts, at, retryAfterMs, at)?.getTime() ?? null;
    expect([1, 2, 3, 4, 5, 6].map((n) => next(n, null))).toEqual([
      60_000, 300_000, 900_000, 3_600_000, 14_400_000, 43_200_000,
    ]);
    expect(next(7, null)).toBeNull();
    expect(next(1, 7_200_000)).toBe(7_200_000);
    expect(next(7, 1_000)).toBeNull();
    // A Retry-After shorter than the schedule's wait never brings the next attempt forward.
    expect(next(1, 2_000)).toBe(60_000);
    expect(next(3, 1_000)).toBe(900_000);
    // A test event gets one attempt.
    expect(next(1, null, 'webhook.test')).toBeNull();
  });

  it('lets a Retry-After lengthen the waits only while the rest of the schedule fits in 24 hours', () => {
    const HOUR = 3_600_000;
    const queuedAt = new Date(0);
    // The schedule takes 17 h 21 min, so after the first failure a wait may grow to 6 h 40 min.
    expect(nextAttemptAt('call.completed', 1, queuedAt, 24 * HOUR, queuedAt)!.getTime()).toBe(24_000_000);
    // A receiver asking for 12 hours after every failure still gets its 7 attempts within the window.
    let failedAt = queuedAt;
    for (let attempts = 1; attempts < 7; attempts += 1) {
      failedAt = nextAttemptAt('call.completed', attempts, failedAt, 12 * HOUR, queuedAt)!;
    }
    expect(failedAt.getTime()).toBe(24 * HOUR);
    expect(nextAttemptAt('call.completed', 7, failedAt, 12 * HOUR, queuedAt)).toBeNull();
    // A delivery already late (a backlog, an outage) keeps the schedule's waits.
    const late = new Date(30 * HOUR);
    expect(nextAttemptAt('call.completed', 2, late, 12 * HOUR, queuedAt)!.getTime()).toBe(late.getTime() + 300_000);
  });

  it('parses Retry-After seconds and HTTP dates', () => {
    const now = new Date('2026-11-21T09:00:00.000Z');
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:10:00 GMT', now)).toBe(600_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
