/**
 * A real SMTP server on loopback for mail tests: collects every message it accepts, parsed
 * with mailparser. `mode` makes it refuse (`reject`: 554 after DATA), drop the connection
 * mid-message (`disconnect`) or hang (`stall`), for the failure paths.
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo, Socket } from 'node:net';
import type { Test } from 'tap';

export interface ReceivedMail {
  /** RCPT TO addresses of the envelope. */
  to: string[];
  raw: string;
  parsed: ParsedMail;
  /** The raw (unfolded) value of the first header with this name. */
  header(name: string): string | undefined;
}

export interface TestSmtp {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** `stall`: the sender's MAIL FROM is never answered, so a send hangs before any data. */
  mode: 'accept' | 'reject' | 'disconnect' | 'stall';
  /** Sends that reached MAIL FROM while stalling. */
  stalled: number;
  /** Connections that reached DATA, whatever the mode did with them. */
  attempts: number;
  /** Resolves when `count` messages match (default 1), or fails after `timeoutMs`. */
  waitFor(
    match: (mail: ReceivedMail) => boolean,
    options?: { count?: number; timeoutMs?: number },
  ): Promise<ReceivedMail[]>;
}

export async function startSmtp(t: Test): Promise<TestSmtp> {
  const waiters = new Set<() => void>();
  const state: TestSmtp = {
    url: '',
    port: 0,
    messages: [],
    mode: 'accept',
    attempts: 0,
    stalled: 0,
    waitFor: (match, options = {}) => {
      const count = options.count ?? 1;
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = state.messages.filter(match);
          if (found.length < count) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`timed out waiting for ${count} mail(s); have ${state.messages.length}`),
          );
        }, options.timeoutMs ?? 60_000);
        if (!check()) waiters.add(check);
      });
    },
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 100,
    onMailFrom(_address, _session, callback) {
      if (state.mode !== 'stall') return callback();
      state.stalled++;
    },
    onData(stream, session, callback) {
      state.attempts++;
      const chunks: Buffer[] = [];
      if (state.mode === 'disconnect') {
        // Drop the socket mid-message: the client sees the connection die before the reply.
        stream.once('data', () =>
          (server as unknown as { connections: Set<{ _socket: Socket }> }).connections.forEach(
            (c) => c._socket.destroy(),
          ),
        );
        stream.resume();
        return;
      }
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (state.mode === 'reject')
          return callback(
            Object.assign(new Error('rejected by the test server'), { responseCode: 554 }),
          );
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then((parsed) => {
          state.messages.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            parsed,
            // The raw header value (unfolded): mailparser turns some headers into structures.
            header: (name) => {
              const line = parsed.headerLines.find((h) => h.key === name.toLowerCase())?.line;
              return line
                ?.slice(line.indexOf(':') + 1)
                .replace(/\r?\n[ \t]+/g, ' ')
                .trim();
            },
          });
          callback();
          for (const waiter of [...waiters]) waiter();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.server.address() as AddressInfo).port;
  state.url = `smtp://127.0.0.1:${state.port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}
