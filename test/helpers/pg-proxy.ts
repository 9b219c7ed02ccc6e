/**
 * A loopback TCP proxy in front of the test Postgres, for tests that need a connection to go
 * away, or a query to wait, at a moment they choose: the database itself stays up.
 */
import net from 'node:net';
import type { Test } from 'tap';

export interface PgProxy {
  /** The database URL through the proxy. */
  readonly url: string;
  /** Closes every connection it carries, as a server going away does (FIN, no error); new ones are still accepted. */
  cut(): void;
  /** Stops accepting (a connection then is refused) and closes every connection, as a stopped server. */
  stop(): void;
  /** Resolves once the bytes that `hold` names have arrived from a client, and are held. */
  readonly held: Promise<void>;
  /** Sends on what was held, and everything after it. */
  release(): void;
}

/**
 * `hold`: the first time a client sends bytes containing this text, they (and what follows on
 * that connection) stay in the proxy until release(): the server has not seen that query yet.
 */
export async function startPgProxy(
  t: Test,
  databaseUrl: string,
  options: { hold?: string } = {},
): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const upstreams = new Set<net.Socket>();
  let matched = false;
  let holding: { upstream: net.Socket; chunks: Buffer[] } | null = null;
  let onHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    upstreams.add(upstream);
    client.on('error', () => {});
    upstream.on('error', () => {});
    upstream.on('close', () => {
      upstreams.delete(upstream);
      client.end();
    });
    client.on('close', () => upstream.destroy());
    client.on('data', (chunk: Buffer) => {
      if (holding?.upstream === upstream) {
        holding.chunks.push(chunk);
        return;
      }
      if (options.hold !== undefined && !matched && chunk.includes(options.hold)) {
        matched = true;
        holding = { upstream, chunks: [chunk] };
        onHeld();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => upstreams.forEach((upstream) => upstream.destroy());
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve()); // called with an error when stop() closed it already
      }),
  );
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut,
    stop: () => {
      server.close();
      cut();
    },
    held,
    release: () => {
      if (!holding) return;
      const { upstream, chunks } = holding;
      holding = null;
      for (const chunk of chunks) upstream.write(chunk);
    },
  };
}
