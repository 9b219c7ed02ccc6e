/**
 * Segment trie over the route table: static segments win over parameters, and a known
 * path with an unknown method yields the methods it does allow (for 405 + Allow).
 */
import type { Method, Route } from './route.ts';

interface Node {
  statics: Map<string, Node>;
  param: { name: string; node: Node } | null;
  methods: Map<Method, Route>;
}

const newNode = (): Node => ({ statics: new Map(), param: null, methods: new Map() });

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
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        const name = param[1]!;
        if (node.param && node.param.name !== name) {
          throw new Error(`${route.path}: parameter {${name}} clashes with {${node.param.name}}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
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
      } else if (node.param && segment !== '') {
        let value: string;
        try {
          value = decodeURIComponent(segment);
        } catch {
          return { kind: 'none' };
        }
        params[node.param.name] = value;
        node = node.param.node;
      } else {
        return { kind: 'none' };
      }
    }
    if (node.methods.size === 0) return { kind: 'none' };
    const route = node.methods.get(method as Method) ?? (method === 'HEAD' ? node.methods.get('GET') : undefined);
    if (route) return { kind: 'found', route, params };
    return { kind: 'method', allow: [...node.methods.keys()] };
  }
}

function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}
