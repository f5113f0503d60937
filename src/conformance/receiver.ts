// The check's own webhook receiver: HTTPS on 127.0.0.1 with webhook:listen's CA (made in its state
// folder if missing), so a server started to trust the listener trusts this receiver too. It answers
// every request 200 and keeps it, so the scenarios can verify what the server signed.
import { startHttpsReceiver, type ReceivedRequest } from '../tools/https-receiver.js';
import { defaultStateDir, openStateDir } from '../tools/listen/state-dir.js';
import { loadOrMakeTls } from '../tools/listen/stored-tls.js';

/** A listening receiver: its URL, the CA file a server must trust, what it received. */
export interface LoopbackReceiver {
  url: string;
  caFile: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts the receiver with the CA in `dir` (webhook:listen's state folder by default); rejects when it cannot listen. */
export async function startLoopbackReceiver(dir: string = defaultStateDir()): Promise<LoopbackReceiver> {
  await openStateDir(dir);
  const { tls, caFile } = await loadOrMakeTls(dir, '127.0.0.1');
  const received: ReceivedRequest[] = [];
  const receiver = await startHttpsReceiver({
    tls,
    answer: (request, _incoming, response) => {
      received.push(request);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    },
  });
  return { url: `${receiver.origin}/conformance-hook`, caFile, received, close: () => receiver.close() };
}
