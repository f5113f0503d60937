// Throwaway TLS material for HTTPS servers on this machine: a certificate authority made on the spot and
// a server certificate for the loopback names (127.0.0.1, localhost, ::1) that it signs.
import { isIP } from 'node:net';
import { generate } from 'selfsigned';

/** A server's private key and certificate (PEM). */
export interface ServerCertificate {
  key: string;
  cert: string;
}

/** A server certificate and the certificate of the CA that signed it (the one a client must trust). */
export interface LocalTls extends ServerCertificate {
  caCert: string;
}

/** What to name the CA and which host names or addresses, beyond the loopback ones, the server answers to. */
export interface LocalTlsOptions {
  caName?: string;
  hosts?: readonly string[];
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

function subjectAltNames(hosts: readonly string[]) {
  return [...new Set([...LOOPBACK, ...hosts])].map((host) =>
    isIP(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
  );
}

/**
 * A server certificate for the loopback names and `hosts`, signed by `ca`, or by its own key when no CA
 * is given (a certificate no client trusts). Rejects when the key or certificate cannot be made.
 */
export async function makeServerCertificate(
  ca?: ServerCertificate,
  hosts: readonly string[] = [],
): Promise<ServerCertificate> {
  const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...(ca ? { ca: { key: ca.key, cert: ca.cert } } : {}),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: subjectAltNames(hosts) },
    ],
  });
  return { key: leaf.private, cert: leaf.cert };
}

/** A new certificate authority named `caName` (its key and certificate). Rejects when it cannot be made. */
export async function makeCa(caName = 'Local test CA'): Promise<ServerCertificate> {
  const ca = await generate([{ name: 'commonName', value: caName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { key: ca.private, cert: ca.cert };
}

/** A new CA and a server certificate it signed (see makeServerCertificate). Rejects when either cannot be made. */
export async function makeLocalTls({ caName = 'Local test CA', hosts = [] }: LocalTlsOptions = {}): Promise<LocalTls> {
  const ca = await makeCa(caName);
  const server = await makeServerCertificate(ca, hosts);
  return { caCert: ca.cert, ...server };
}
