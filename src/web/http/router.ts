/**
 * Segment trie over the route table: static segments win over parameters with a literal
 * suffix (`{token}.json`), which win over bare parameters; a known path with an unknown
 * method yields the methods it does allow (for 405 + Allow).
 */
import type { Method, Route } from './route.ts';

interface Param {
  name: string;
  node: Node;
}

interface Node {
  statics: Map<string, Node>;
  /** Parameters followed by a literal suffix in the same segment, keyed by the suffix. */
  suffixed: Map<string, Param>;
  param: Param | null;
  methods: Map<Method, Route>;
}

const newNode = (): Node => ({
  statics: new Map(),
  suffixed: new Map(),
  param: null,
  methods: new Map(),
});

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allow: Method[] }
  | { kind: 'none' };

export class Router {
  private readonly root = newNode();
  readonly routes: Route[] = [];

  add(route: Route): void {
    let node = this.root;
    for (const segment of split(route.path)) {
      const param = /^\{(\w+)\}([\w.-]*)$/.exec(segment);
      if (param) {
        const name = param[1]!;
        const suffix = param[2]!;
        const existing = suffix ? node.suffixed.get(suffix) : node.param;
        if (existing && existing.name !== name) {
          throw new Error(`${route.path}: parameter {${name}} clashes with {${existing.name}}`);
        }
        const next = existing ?? { name, node: newNode() };
        if (suffix) node.suffixed.set(suffix, next);
        else node.param = next;
        node = next.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.methods.has(route.method))
      throw new Error(`duplicate route ${route.method} ${route.path}`);
    node.methods.set(route.method, route);
    this.routes.push(route);
  }

  match(method: string, path: string): Match {
    const params: Record<string, string> = {};
    let node: Node | undefined = this.root;
    for (const segment of split(path)) {
      const next: Node | undefined = node.statics.get(segment);
      if (next) {
        node = next;
        continue;
      }
      let param: Param | null = null;
      let raw = segment;
      for (const [suffix, candidate] of node.suffixed) {
        if (segment.length > suffix.length && segment.endsWith(suffix)) {
          param = candidate;
          raw = segment.slice(0, -suffix.length);
          break;
        }
      }
      param ??= segment !== '' ? node.param : null;
      if (!param) return { kind: 'none' };
      try {
        params[param.name] = decodeURIComponent(raw);
      } catch {
        return { kind: 'none' };
      }
      node = param.node;
    }
    if (node.methods.size === 0) return { kind: 'none' };
    const route =
      node.methods.get(method as Method) ??
      (method === 'HEAD' ? node.methods.get('GET') : undefined);
    if (route) return { kind: 'found', route, params };
    return { kind: 'method', allow: [...node.methods.keys()] };
  }
}

function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}
