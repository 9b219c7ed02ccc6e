/** Raw HTTP/1.1 over a TCP socket, for what fetch cannot send (odd framing, raw bytes, many headers). */
import net from 'node:net';

export interface RawResponse {
  /** null when the server closed (or kept silent) without answering. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** How the exchange ended. */
  ended: 'closed' | 'silent' | 'reset';
}

/**
 * Writes `data` and collects the answer until the server closes the connection. A server that
 * neither answers nor closes within `waitMs` is reported as `silent` (the socket is then destroyed).
 */
export function rawRequest(
  port: number,
  data: string | Buffer,
  waitMs = 30_000,
): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (ended: RawResponse['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks), ended));
    };
    const timer = setTimeout(() => finish('silent'), waitMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // A complete response with Content-Length is enough; do not wait for keep-alive to end.
      const parsed = parse(Buffer.concat(chunks), 'closed');
      const length = Number(parsed.headers['content-length'] ?? NaN);
      if (
        parsed.status !== null &&
        Number.isFinite(length) &&
        Buffer.byteLength(parsed.body, 'latin1') >= length
      )
        finish('closed');
    });
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('closed'));
    socket.write(data);
  });
}

function parse(bytes: Buffer, ended: RawResponse['ended']): RawResponse {
  let text = bytes.toString('latin1');
  // Interim answers (100 Continue) precede the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(text) && text.includes('\r\n\r\n'))
    text = text.slice(text.indexOf('\r\n\r\n') + 4);
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return { status: null, headers: {}, body: '', ended };
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: match ? Number(match[1]) : null, headers, body: text.slice(split + 4), ended };
}

/** A request with correct framing: Host, Connection: close and Content-Length when there is a body. */
export function frame(
  method: string,
  target: string,
  headers: [string, string][] = [],
  body?: Buffer | string,
): Buffer {
  const payload =
    body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  if (payload !== undefined) lines.push(`Content-Length: ${payload.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return payload === undefined ? head : Buffer.concat([head, payload]);
}
