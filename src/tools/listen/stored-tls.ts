// The listener's TLS material, kept in its state folder and reused: a local CA (the certificate the API
// must trust) and a server certificate it signed. A restart serves the same certificate, so deliveries
// keep verifying; the server certificate alone is re-signed when it nears expiry or lacks the host.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import path from 'node:path';
import { makeCa, makeServerCertificate, type LocalTls, type ServerCertificate } from '../local-ca.js';
import { readStateFile, writeStateFile } from './state-dir.js';

/** The TLS material in use, where the CA's certificate is, and whether the CA was made just now. */
export interface StoredTls {
  tls: LocalTls;
  caFile: string;
  caIsNew: boolean;
}

const RENEW_BEFORE_MS = 7 * 24 * 60 * 60 * 1000;

const FILES = {
  caCert: 'ca.pem',
  caKey: 'ca-key.pem',
  cert: 'cert.pem',
  key: 'key.pem',
};

async function readPair(dir: string, certName: string, keyName: string): Promise<ServerCertificate | undefined> {
  const [cert, key] = await Promise.all([
    readStateFile(path.join(dir, certName)),
    readStateFile(path.join(dir, keyName)),
  ]);
  return cert && key ? { cert, key } : undefined;
}

/** Whether `cert` is valid for another week and, when `host` is given, names it. Unreadable PEM counts as unusable. */
function usable(cert: string, host?: string): boolean {
  try {
    const x509 = new X509Certificate(cert);
    if (Date.parse(x509.validTo) - Date.now() < RENEW_BEFORE_MS) return false;
    if (host === undefined) return true;
    return Boolean(isIP(host) ? x509.checkIP(host) : x509.checkHost(host));
  } catch {
    return false;
  }
}

/**
 * The CA and server certificate in `dir` for `host`, made (CA once, server certificate when missing,
 * expiring or not naming `host`) and stored with the keys at 0600. Rejects when the folder cannot be
 * read or written.
 */
export async function loadOrMakeTls(dir: string, host: string): Promise<StoredTls> {
  let ca = await readPair(dir, FILES.caCert, FILES.caKey);
  const caIsNew = !ca || !usable(ca.cert);
  if (!ca || caIsNew) {
    ca = await makeCa('voice-call-api webhook:listen local CA');
    await writeStateFile(path.join(dir, FILES.caKey), ca.key);
    // The CA certificate is public: readable by the API's user too.
    await writeStateFile(path.join(dir, FILES.caCert), ca.cert, 0o644);
  }
  let server = caIsNew ? undefined : await readPair(dir, FILES.cert, FILES.key);
  if (!server || !usable(server.cert, host)) {
    server = await makeServerCertificate(ca, [host]);
    await writeStateFile(path.join(dir, FILES.key), server.key);
    await writeStateFile(path.join(dir, FILES.cert), server.cert);
  }
  return { tls: { caCert: ca.cert, ...server }, caFile: path.join(dir, FILES.caCert), caIsNew };
}
