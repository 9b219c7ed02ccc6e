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
      `HTTP_TRANSPORT=uws, but no uWebSockets.js build loads here (${reason}); unset HTTP_TRANSPORT to serve on node:http (README: Runtime)`,
    );
  }
}

/** What decides whether a uWS build loads: the Node, the system and its C library. */
export interface Platform {
  /** `20.20.2`. */
  node: string;
  /** The native-module ABI (`process.versions.modules`), which picks the build. */
  abi: string;
  os: string;
  arch: string;
  /** The running glibc's version; undefined where the C library is another (musl) or the system not Linux. */
  glibc: string | undefined;
}

export function thisPlatform(): Platform {
  const { header } = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return {
    node: process.versions.node,
    abi: process.versions.modules,
    os: process.platform,
    arch: process.arch,
    glibc: header?.glibcVersionRuntime,
  };
}

/**
 * Why no uWS build loads, in this system's terms, from the loader's error. uWS's own first line
 * blames the Node version whatever failed (it says so on Debian 12's Node 20, whose build it
 * ships), so it is not repeated: the dynamic loader's words after it tell what is missing.
 */
export function uwsLoadFailure(error: unknown, platform: Platform): string {
  const text = error instanceof Error ? error.message : String(error);
  const build = `its ${platform.os}-${platform.arch} build for Node ${platform.node.split('.')[0]} (ABI ${platform.abi})`;
  const neededGlibc = /GLIBC_(\d+(?:\.\d+)+)' not found/.exec(text)?.[1];
  if (neededGlibc && platform.glibc)
    return `glibc ${platform.glibc} here is older than the glibc ${neededGlibc} ${build} needs`;
  if (/Cannot find module .*uws_/.test(text))
    return `the package has no build for Node ${platform.node} (ABI ${platform.abi}) on ${platform.os}-${platform.arch}`;
  if (platform.os === 'linux' && !platform.glibc)
    return `${build} needs glibc, and this system's C library is another (musl?)`;
  return text.trim().split('\n').pop() ?? text;
}

export async function openTransport(choice: TransportChoice): Promise<Transport> {
  if (choice !== 'node') {
    try {
      const { listen } = await import('./uws/server.ts');
      return { name: 'uws', listen };
    } catch (error) {
      const reason = uwsLoadFailure(error, thisPlatform());
      if (choice === 'uws') throw new UwsUnavailable(reason);
      const { listen } = await import('./node/server.ts');
      return { name: 'node', listen, fallbackReason: reason };
    }
  }
  const { listen } = await import('./node/server.ts');
  return { name: 'node', listen };
}
