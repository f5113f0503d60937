// Registration-time check of a webhook URL: https, no credentials, no port that fetch blocks, not
// localhost, and every address the host resolves to passes the address policy. The same rules are
// enforced again when a delivery is sent.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { addressRefusal, type Allowlist } from './address-policy.js';
import { blockedPorts } from './blocked-ports.js';

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** The system resolver (getaddrinfo, so /etc/hosts counts), all addresses. */
const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** A URL deliveries may not go to; the message is written for the API client. */
export class UrlRefusedError extends Error {}

/** The URL's host without IPv6 brackets or a trailing dot, lower-cased. */
function bareHostname(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Resolves when `raw` is a URL deliveries may go to; throws UrlRefusedError saying why not otherwise
 * (including when the host does not resolve).
 */
export async function assertDeliverableUrl(
  raw: string,
  allowlist: Allowlist,
  resolve: Resolver = systemResolver,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new UrlRefusedError('must use https://');
  if (url.username || url.password) throw new UrlRefusedError('must not contain a user name or password');
  if (url.port && blockedPorts.has(url.port)) {
    throw new UrlRefusedError(`must not use port ${url.port}: it is on fetch's list of blocked ports`);
  }
  const host = bareHostname(url);
  if (host === 'localhost' || host.endsWith('.localhost')) {
    throw new UrlRefusedError('must not point at localhost; deliveries go only to public addresses');
  }
  if (ipaddr.isValid(host)) {
    const refusal = addressRefusal(host, allowlist);
    if (refusal) throw new UrlRefusedError(`points at ${host}, ${refusal}; deliveries go only to public addresses`);
    return;
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new UrlRefusedError(`host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRefusedError(`host ${host} does not resolve`);
  for (const address of addresses) {
    const refusal = addressRefusal(address, allowlist);
    if (refusal) {
      throw new UrlRefusedError(
        `host ${host} resolves to ${address}, ${refusal}; deliveries go only to public addresses`,
      );
    }
  }
}
