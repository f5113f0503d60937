// webhook:listen: a local HTTPS receiver that verifies each signed delivery (raw body, 5-minute
// tolerance, constant-time comparison, any matching v1) and prints the events.
//
//   npm run webhook:listen -- --secret <hex> [--secret <old hex>] [--port 8443] [--host 127.0.0.1]
//   (or WEBHOOK_SECRETS=<hex>[,<hex>] and WEBHOOK_LISTEN_PORT)
//
// It makes a throwaway CA and a server certificate at start (src/tools/local-ca.ts) and writes the CA's
// certificate to .data/webhook-listen-cert.pem; start the API with NODE_EXTRA_CA_CERTS pointing at that
// file and WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 so deliveries to this loopback receiver are allowed and
// its certificate is trusted.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startHttpsReceiver } from '../tools/https-receiver.js';
import { makeLocalTls } from '../tools/local-ca.js';
import { verifySignature } from '../webhooks/delivery/verify.js';
import { summarizeEvent } from '../tools/event-summary.js';
import { wantsHelp } from './command.js';

const USAGE = `Usage: voice-call-api webhook:listen --secret HEX [--secret OLD_HEX] [--port 8443] [--host 127.0.0.1] [--cert-out FILE]

A local HTTPS receiver that verifies each signed delivery and prints its event. The secrets may also
be given as WEBHOOK_SECRETS=HEX[,HEX], the port as WEBHOOK_LISTEN_PORT.
`;

/** The webhook:listen command; resolves once stopped with SIGINT or SIGTERM. */
export async function webhookListen(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({
    args: argv,
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
    return 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a port number, got "${values.port}"`);
    return 2;
  }

  const tls = await makeLocalTls({ caName: 'webhook-listen CA', hosts: [values.host] });
  await mkdir(path.dirname(values['cert-out']), { recursive: true });
  await writeFile(values['cert-out'], tls.caCert);

  const receiver = await startHttpsReceiver({
    tls,
    host: values.host,
    port,
    answer: ({ bytes, headers }, _request, response) => {
      // Verify the bytes exactly as received; never re-serialise the JSON first.
      const verdict = verifySignature(bytes, headers['x-svc-signature'] as string | undefined, secrets);
      const stamp = new Date().toISOString();
      const kind = headers['x-svc-event'];
      const delivery = headers['x-svc-delivery'];
      if (!verdict.ok) {
        console.log(`${stamp}  REJECTED ${kind ?? '-'} delivery=${delivery ?? '-'}: ${verdict.reason}`);
        response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: verdict.reason }));
        return;
      }
      let pretty = bytes.toString('utf8');
      let summary = String(kind);
      try {
        const envelope = JSON.parse(pretty) as { event: string; data: unknown };
        summary = summarizeEvent(envelope.event, envelope.data);
        pretty = JSON.stringify(envelope, null, 2);
      } catch {
        // Printed as received.
      }
      console.log(`${stamp}  verified ${kind} delivery=${delivery}: ${summary}\n${pretty}\n`);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    },
  });

  console.log(`Listening on ${receiver.origin}/ (${secrets.length} secret${secrets.length > 1 ? 's' : ''})`);
  console.log(`Certificate: ${values['cert-out']}`);
  console.log(`Run the API with NODE_EXTRA_CA_CERTS=${values['cert-out']} WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8`);

  return new Promise<number>((resolve) => {
    const stop = () => void receiver.close().then(() => resolve(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
