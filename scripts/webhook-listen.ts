// npm run webhook:listen: a local HTTPS receiver that verifies each signed delivery (raw body, 5-minute
// tolerance, constant-time comparison, any matching v1) and prints the events.
//
//   npm run webhook:listen -- --secret <hex> [--secret <old hex>] [--port 8443] [--host 127.0.0.1]
//   (or WEBHOOK_SECRETS=<hex>[,<hex>] and WEBHOOK_LISTEN_PORT)
//
// It creates a self-signed certificate at start and writes it to .data/webhook-listen-cert.pem; start
// the API with NODE_EXTRA_CA_CERTS pointing at that file and WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 so
// deliveries to this loopback receiver are allowed and its certificate is trusted.
import { mkdir, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generate } from 'selfsigned';
import { verifySignature } from '../src/webhooks/delivery/verify.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.WEBHOOK_LISTEN_PORT ?? '8443' },
    host: { type: 'string', default: '127.0.0.1' },
    secret: { type: 'string', multiple: true, default: [] },
    'cert-out': { type: 'string', default: path.resolve('.data/webhook-listen-cert.pem') },
  },
});

const secrets = [...values.secret, ...(process.env.WEBHOOK_SECRETS ?? '').split(',')]
  .map((s) => s.trim())
  .filter(Boolean);
if (secrets.length === 0) {
  console.error(
    'Give the endpoint secret: --secret <hex> (repeat it during a rotation) or WEBHOOK_SECRETS=<hex>[,<hex>]',
  );
  process.exit(2);
}
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got "${values.port}"`);
  process.exit(2);
}

const pems = await generate([{ name: 'commonName', value: 'webhook-listen' }], {
  keyType: 'ec',
  algorithm: 'sha256',
  extensions: [
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
        ...(values.host !== '127.0.0.1' && values.host !== 'localhost'
          ? [{ type: 2 as const, value: values.host }]
          : []),
      ],
    },
  ],
});
await mkdir(path.dirname(values['cert-out']), { recursive: true });
await writeFile(values['cert-out'], pems.cert);

const server = https.createServer({ key: pems.private, cert: pems.cert }, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    // Verify the bytes exactly as received; never re-serialise the JSON first.
    const rawBody = Buffer.concat(chunks);
    const verdict = verifySignature(rawBody, request.headers['x-svc-signature'] as string | undefined, secrets);
    const stamp = new Date().toISOString();
    const kind = request.headers['x-svc-event'];
    const delivery = request.headers['x-svc-delivery'];
    if (!verdict.ok) {
      console.log(`${stamp}  REJECTED ${kind ?? '-'} delivery=${delivery ?? '-'}: ${verdict.reason}`);
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: verdict.reason }));
      return;
    }
    let pretty = rawBody.toString('utf8');
    try {
      pretty = JSON.stringify(JSON.parse(pretty), null, 2);
    } catch {
      // Printed as received.
    }
    console.log(`${stamp}  verified ${kind} delivery=${delivery}\n${pretty}\n`);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
});

server.listen(port, values.host, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const host = values.host.includes(':') ? `[${values.host}]` : values.host;
  console.log(`Listening on https://${host}:${actualPort}/ (${secrets.length} secret${secrets.length > 1 ? 's' : ''})`);
  console.log(`Certificate: ${values['cert-out']}`);
  console.log(`Run the API with NODE_EXTRA_CA_CERTS=${values['cert-out']} WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8`);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
