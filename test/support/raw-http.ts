// HTTP exchanges below fetch: bytes no client would send (bad header bytes, smuggling attempts) over a
// raw socket, and requests fetch refuses to make (a body on GET, bytes without a Content-Type).
import http from 'node:http';
import net from 'node:net';

/** A parsed HTTP/1.1 answer; status 0 when the server closed the connection without one. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The answer in `raw` once it is complete (by Content-Length), else null. */
function complete(raw: Buffer, closed: boolean): RawAnswer | null {
  const text = raw.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return closed ? { status: 0, headers: {}, body: text } : null;
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(split + 4);
  if (!closed && body.length < Number(headers['content-length'] ?? Infinity)) return null;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, body };
}

/** Writes `request` to 127.0.0.1:`port` as is and reads one answer (until its Content-Length, or until the server closes), within `timeoutMs`. */
export function rawExchange(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const finish = (answer: RawAnswer) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = complete(received, false);
      if (answer) finish(answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(complete(received, true)!));
  });
}

/** Sends one request with node:http, which (unlike fetch) allows any method to carry a body and adds no header of its own. */
export function plainRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const length = init.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(init.body)) };
    const request = http.request(url, { method: init.method, headers: { ...init.headers, ...length } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(init.body);
  });
}
