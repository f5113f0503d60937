// webhook:listen: a local HTTPS receiver worth keeping open. It keeps its CA, certificate and (when it
// registered one) its endpoint in a private state folder, so a restart changes nothing the API relies
// on; it verifies every delivery, prints it, and can hand it on to a local app (--forward-to).
import { isIP, isIPv6 } from 'node:net';
import { printable } from './terminal-text.js';
import { parse, UsageError } from './args.js';
import { wantsHelp } from './command.js';
import { startHttpsReceiver } from '../tools/https-receiver.js';
import { ApiCallError, apiRootOf, type ApiAccess } from '../tools/listen/api-client.js';
import { forwardTarget } from '../tools/listen/forward.js';
import { listenOutput, type ListenOutput } from '../tools/listen/output.js';
import { MAX_DELIVERY_BYTES, receiveDelivery, screenDelivery } from '../tools/listen/receive.js';
import { endpointFile, ensureEndpoint, forgetEndpoint, readStoredEndpoint } from '../tools/listen/registration.js';
import { readSecrets } from '../tools/listen/secrets.js';
import { defaultStateDir, openStateDir } from '../tools/listen/state-dir.js';
import { loadOrMakeTls } from '../tools/listen/stored-tls.js';

const API_KEY_VARIABLE = 'VOICE_CALL_API_KEY';

const USAGE = `Usage: voice-call-api webhook:listen [options]
       npm run webhook:listen -- [options]            (from a checkout)

A local HTTPS receiver that verifies each signed delivery, prints its event and can forward it.
Requests without an x-svc-signature header (400) and bodies over 1 MiB (413) are refused unread.

Signing secret (never on the command line, where other users can read it):
  WEBHOOK_SECRETS=HEX[,HEX]      environment variable (two during a rotation)
  --secret-file FILE             a file holding the secret(s); "-" reads standard input
  --api-url URL                  or register an endpoint for this listener through the API (needs
                                 ${API_KEY_VARIABLE}); its id and secret are stored and reused on restart

Options:
  --forward-to URL               POST each verified delivery (body and x-svc-* headers) to a local
                                 http(s) URL and answer the service with its status
  --forget                       delete the registered endpoint through the API given by --api-url
                                 (the one it was registered with), remove its stored state and exit
                                 (needs ${API_KEY_VARIABLE}); the key is sent to that URL only
  --setup                        make (or reuse) the certificate, print the API's trust settings, exit
  --port N                       default: the registered endpoint's port, else WEBHOOK_LISTEN_PORT, else 8443
  --host ADDRESS                 default 127.0.0.1
  --config-dir DIR               state folder; default WEBHOOK_LISTEN_DIR, else
                                 \${XDG_CONFIG_HOME:-~/.config}/voice-call-api/listen (now ${defaultStateDir()})
  --json                         one JSON object per line instead of text
  -h, --help                     print this usage
`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  'config-dir': { type: 'string' },
  'secret-file': { type: 'string' },
  'api-url': { type: 'string' },
  'forward-to': { type: 'string' },
  forget: { type: 'boolean' },
  setup: { type: 'boolean' },
  // Refused: only declared so its value is never echoed back in a parse error.
  secret: { type: 'string', multiple: true },
} as const;

/** What the command line asks for, checked. */
interface ListenRequest {
  dir: string;
  host: string;
  /** From --port. */
  port: number | undefined;
  /** From WEBHOOK_LISTEN_PORT, used when neither --port nor a stored endpoint gives one. */
  envPort: number | undefined;
  secretFile: string | undefined;
  /** The API root from --api-url. */
  apiRoot: string | undefined;
  forwardTo: URL | undefined;
  forget: boolean;
  setup: boolean;
  json: boolean;
}

function port(raw: string, source: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > 65535)
    throw new UsageError(`${source} must be a port number (0-65535), got "${raw}"`);
  return value;
}

function readRequest(argv: string[]): ListenRequest {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.secret !== undefined) {
    throw new UsageError(
      '--secret is not accepted: a secret on the command line is visible to other users; use WEBHOOK_SECRETS, --secret-file FILE or --secret-file - (standard input)',
    );
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values['api-url'] !== undefined && typeof values.host === 'string' && !isIP(values.host)) {
    throw new UsageError(
      `--host must be an IP address when the listener registers its own endpoint, got "${values.host}"`,
    );
  }
  const str = (name: keyof typeof OPTIONS) => (typeof values[name] === 'string' ? values[name] : undefined);
  const envPort = process.env.WEBHOOK_LISTEN_PORT;
  let forwardTo: URL | undefined;
  let apiRoot: string | undefined;
  try {
    forwardTo = str('forward-to') === undefined ? undefined : forwardTarget(str('forward-to')!);
    apiRoot = str('api-url') === undefined ? undefined : apiRootOf(str('api-url')!);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    dir: str('config-dir') ?? defaultStateDir(),
    host: str('host')!,
    port: str('port') === undefined ? undefined : port(str('port')!, '--port'),
    envPort: envPort === undefined ? undefined : port(envPort, 'WEBHOOK_LISTEN_PORT'),
    secretFile: str('secret-file'),
    apiRoot,
    forwardTo,
    forget: values.forget === true,
    setup: values.setup === true,
    json: values.json === true,
  };
}

function apiKey(why: string): string {
  const key = process.env[API_KEY_VARIABLE];
  if (!key)
    throw new UsageError(`${why} needs an API key of the org in ${API_KEY_VARIABLE} (never on the command line)`);
  return key;
}

/** The WEBHOOK_PRIVATE_ALLOWLIST range that lets the API deliver to `host` (all of 127.0.0.0/8 for an IPv4 loopback address). */
function allowlistFor(host: string): string {
  if (host.startsWith('127.')) return '127.0.0.0/8';
  return isIPv6(host) ? `${host}/128` : `${host}/32`;
}

function printTrust(output: ListenOutput, caFile: string, caIsNew: boolean, host: string): void {
  const allowlist = allowlistFor(host);
  output.fact('trust', `CA certificate: ${caFile}${caIsNew ? ' (new)' : ''}`, { ca_file: caFile, ca_is_new: caIsNew });
  output.fact(
    'settings',
    `Run the API with NODE_EXTRA_CA_CERTS=${caFile} WEBHOOK_PRIVATE_ALLOWLIST=${allowlist} (it reads them at start: restart it after a new CA)`,
    { NODE_EXTRA_CA_CERTS: caFile, WEBHOOK_PRIVATE_ALLOWLIST: allowlist },
  );
}

/** A refused registration, with what the API needs to accept this loopback receiver. */
function refusedUrlHint(error: unknown, host: string): unknown {
  if (!(error instanceof ApiCallError) || error.status !== 400) return error;
  return new ApiCallError(
    `${error.message} (a receiver on ${host} needs the API started with WEBHOOK_PRIVATE_ALLOWLIST=${allowlistFor(host)})`,
    error.status,
  );
}

async function forget(request: ListenRequest, output: ListenOutput): Promise<number> {
  if (!request.apiRoot) throw new UsageError('--forget needs --api-url URL: the API the endpoint was registered with');
  const gone = await forgetEndpoint(request.dir, { apiRoot: request.apiRoot, apiKey: apiKey('--forget') });
  if (gone)
    output.fact('forgotten', `Deleted endpoint ${gone.id} (${gone.url}) and its stored state`, {
      id: gone.id,
      url: gone.url,
    });
  else output.fact('forgotten', `No endpoint stored in ${request.dir}: nothing to delete`, { id: null });
  return 0;
}

async function listen(request: ListenRequest, output: ListenOutput): Promise<number> {
  if (request.setup) {
    await openStateDir(request.dir);
    const { caFile, caIsNew } = await loadOrMakeTls(request.dir, request.host);
    printTrust(output, caFile, caIsNew, request.host);
    return 0;
  }
  const secrets = await readSecrets(request.secretFile);
  const access: ApiAccess | undefined = request.apiRoot
    ? { apiRoot: request.apiRoot, apiKey: apiKey('--api-url') }
    : undefined;
  if (!access && secrets.length === 0) {
    throw new UsageError(
      `no signing secret: set WEBHOOK_SECRETS, pass --secret-file FILE (or - for standard input), or register an endpoint with --api-url URL and ${API_KEY_VARIABLE}`,
    );
  }
  await openStateDir(request.dir);
  const { tls, caFile, caIsNew } = await loadOrMakeTls(request.dir, request.host);
  // A restart listens where the stored endpoint points, so the API's registration stays valid.
  const stored = access ? await readStoredEndpoint(request.dir) : undefined;
  const storedPort =
    stored && stored.api_root === access?.apiRoot ? Number(new URL(stored.url).port || 443) : undefined;
  const receiver = await startHttpsReceiver({
    tls,
    host: request.host,
    port: request.port ?? storedPort ?? request.envPort ?? 8443,
    // Unsigned requests and bodies over 1 MiB are refused before their body is read.
    screen: (incoming) => screenDelivery(incoming.headers),
    maxBodyBytes: MAX_DELIVERY_BYTES,
    answer: (received, _request, response) =>
      void receiveDelivery(received, response, {
        secrets,
        forwardTo: request.forwardTo,
        report: (record) => output.delivery(record),
      }),
  });
  try {
    output.fact('listening', `Listening on ${receiver.origin}/`, { url: `${receiver.origin}/` });
    printTrust(output, caFile, caIsNew, request.host);
    if (access) {
      const { endpoint, registered, replaced } = await ensureEndpoint(request.dir, access, `${receiver.origin}/`).catch(
        (error: unknown) => {
          throw refusedUrlHint(error, request.host);
        },
      );
      secrets.push(endpoint.secret);
      output.fact(
        'endpoint',
        `${registered ? 'Registered' : 'Reusing'} endpoint ${endpoint.id} for ${endpoint.url}${replaced ? ` (replacing ${replaced})` : ''}; id and secret kept in ${endpointFile(request.dir)}`,
        {
          id: endpoint.id,
          url: endpoint.url,
          registered,
          replaced: replaced ?? null,
          state_file: endpointFile(request.dir),
        },
      );
    }
    output.fact('secrets', `Verifying with ${secrets.length} secret${secrets.length === 1 ? '' : 's'}`, {
      count: secrets.length,
    });
    if (request.forwardTo) {
      output.fact('forwarding', `Forwarding verified deliveries to ${request.forwardTo.href}`, {
        forward_to: request.forwardTo.href,
      });
    }
  } catch (error) {
    await receiver.close();
    throw error;
  }
  return new Promise<number>((resolve) => {
    const stop = () => void receiver.close().then(() => resolve(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** The webhook:listen command; resolves once stopped with SIGINT or SIGTERM (2 on a bad command line, 1 on a failure). */
export async function webhookListen(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const json = argv.includes('--json');
  try {
    const request = readRequest(argv);
    const output = listenOutput(request.json);
    return await (request.forget ? forget(request, output) : listen(request, output));
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `Error: ${printable(message)}\n`);
    if (error instanceof UsageError) {
      if (!json) process.stderr.write(`Run with --help for the options.\n`);
      return 2;
    }
    return 1;
  }
}
