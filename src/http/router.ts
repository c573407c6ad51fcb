// Path routing over a segment trie. uWebSockets.js hands us every request through one
// catch-all handler so that unknown paths (route-not-found) and known paths with the
// wrong method (method-not-allowed + Allow) are told apart in one place.
import type { AnyRoute, HttpMethod } from './route.js';

interface Node {
  literal: Map<string, Node>;
  param: { name: string; node: Node } | null;
  routes: Map<HttpMethod, AnyRoute>;
}

const newNode = (): Node => ({ literal: new Map(), param: null, routes: new Map() });

export type Match =
  | { kind: 'route'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: HttpMethod[] }
  | { kind: 'not-found' };

export class Router {
  private readonly root = newNode();
  readonly routes: AnyRoute[] = [];

  add(route: AnyRoute): void {
    let node = this.root;
    for (const seg of splitPath(route.path)) {
      const m = /^\{([a-z_][a-z0-9_]*)\}$/i.exec(seg);
      if (m) {
        if (node.param && node.param.name !== m[1]) {
          throw new Error(`BUG: ${route.path} names parameter {${m[1]}} where a sibling route uses {${node.param.name}}`);
        }
        node.param ??= { name: m[1], node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literal.get(seg);
        if (!next) { next = newNode(); node.literal.set(seg, next); }
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`BUG: duplicate route ${route.method.toUpperCase()} ${route.path}`);
    node.routes.set(route.method, route);
    this.routes.push(route);
  }

  /** `path` is the raw URL path (percent-encoded); parameters come back decoded. */
  match(method: string, path: string): Match {
    const segs = splitPath(path);
    const params: Record<string, string> = {};
    const node = this.walk(this.root, segs, 0, params);
    if (!node || node.routes.size === 0) return { kind: 'not-found' };
    const route = node.routes.get(method as HttpMethod);
    if (route) return { kind: 'route', route, params };
    return { kind: 'method-not-allowed', allow: [...node.routes.keys()] };
  }

  // Literal segments win over parameters; backtrack into the parameter branch if the
  // literal branch dead-ends (e.g. /tokens/{id}/revoke beside /{id}/tokens).
  private walk(node: Node, segs: string[], i: number, params: Record<string, string>): Node | null {
    if (i === segs.length) return node.routes.size > 0 ? node : null;
    const seg = segs[i];
    const lit = node.literal.get(seg);
    if (lit) {
      const found = this.walk(lit, segs, i + 1, params);
      if (found) return found;
    }
    if (node.param) {
      let value: string;
      try { value = decodeURIComponent(seg); } catch { return null; }
      const found = this.walk(node.param.node, segs, i + 1, params);
      if (found) { params[node.param.name] = value; return found; }
    }
    return null;
  }
}

function splitPath(path: string): string[] {
  const segs = path.split('/');
  // leading '' from the first slash; a trailing slash is not a distinct route
  const out: string[] = [];
  for (const s of segs) if (s !== '') out.push(s);
  return out;
}
