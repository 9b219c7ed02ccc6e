/**
 * Which transport serves HTTP: uWebSockets.js wherever a build of it loads (the design's
 * front end), node:http where none can (an older glibc, another platform), or the one
 * HTTP_TRANSPORT names. uws/ is imported only here, and only when chosen: importing it loads
 * the native binary.
 */
import type { Config } from '../../platform/config.ts';
import type { Listen } from './listener.ts';

type TransportChoice = Config['httpTransport'];

export interface Transport {
  name: 'uws' | 'node';
  listen: Listen;
  /** Why uWS is not serving, when `auto` fell back to node:http. */
  fallbackReason?: string;
}

/** HTTP_TRANSPORT=uws where no uWebSockets.js build loads: not starting. */
export class UwsUnavailable extends Error {
  constructor(reason: string) {
    super(
      `HTTP_TRANSPORT=uws, but no uWebSockets.js build loads here (Node ${process.versions.node}, ABI ${process.versions.modules}, ${process.platform}-${process.arch}: ${reason}); unset HTTP_TRANSPORT to serve on node:http, or run where glibc is 2.38 or newer (README: Runtime)`,
    );
  }
}

/** The first line of the loader's error: the package's own words on what it supports. */
const firstLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';

export async function openTransport(choice: TransportChoice): Promise<Transport> {
  if (choice !== 'node') {
    try {
      const { listen } = await import('./uws/server.ts');
      return { name: 'uws', listen };
    } catch (error) {
      if (choice === 'uws') throw new UwsUnavailable(firstLine(error));
      const { listen } = await import('./node/server.ts');
      return { name: 'node', listen, fallbackReason: firstLine(error) };
    }
  }
  const { listen } = await import('./node/server.ts');
  return { name: 'node', listen };
}
