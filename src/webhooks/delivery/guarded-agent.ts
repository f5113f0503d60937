// The HTTP agent deliveries go through: the address policy is applied at connect time to every address
// a host name resolves to and to IP literals, so DNS rebinding cannot reach an internal address.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, buildConnector } from 'undici';
import { addressRefusal, type Allowlist } from './address-policy.js';

/** A connection the sending policy refused; classified as failure kind `guard`. */
export class GuardError extends Error {
  readonly code = 'ERR_WEBHOOK_GUARD';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(allowlist: Allowlist) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const entry of addresses) {
        const refusal = addressRefusal(entry.address, allowlist);
        if (refusal) return callback(new GuardError(`${hostname} resolves to ${entry.address}, ${refusal}`), []);
      }
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}

/** The address policy and trust store of a guarded agent. */
export interface GuardedAgentOptions {
  allowlist: Allowlist;
  /** Extra PEM CAs trusted beside the system store; empty keeps Node's default trust. */
  caCerts: readonly string[];
}

/** Builds an undici Agent whose every connection passes the address policy; TLS is verified. */
export function createGuardedAgent({ allowlist, caCerts }: GuardedAgentOptions): Agent {
  // Extra CAs go into one secure context for the agent's life: passed as `ca`, they would be parsed
  // again, with the whole system store, on every connection (tens of milliseconds of blocked event loop each).
  const secureContext = caCerts.length > 0 ? createSecureContext({ ca: [...rootCertificates, ...caCerts] }) : undefined;
  const connector = buildConnector({
    timeout: 10_000,
    lookup: guardedLookup(allowlist),
    ...(secureContext ? { secureContext } : {}),
  });
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    const literalRefusal = isIP(host) ? addressRefusal(host, allowlist) : null;
    if (literalRefusal) return callback(new GuardError(`${host} is ${literalRefusal}`), null);
    connector(options, (error, socket) => {
      if (error) return callback(error, null);
      // Belt and braces: the address actually connected to must pass too.
      const remote = socket.remoteAddress;
      const refusal = remote ? addressRefusal(remote, allowlist) : 'an unknown address';
      if (refusal) {
        socket.destroy();
        return callback(new GuardError(`connected to ${remote ?? 'unknown'}, ${refusal}`), null);
      }
      return callback(null, socket);
    });
  };
  return new Agent({ connect });
}
