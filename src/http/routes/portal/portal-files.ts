// The portal's built files (dist/portal, made by scripts/build-portal.mjs). The HTTP layer
// is the only one that knows them (ARCHITECTURE.md). Assets carry a content hash in their
// names, so a file once read never changes under its name and is kept in memory; the page
// itself is read again at every request (it is small and names the current assets), so a
// rebuild under a running service is served at the next load.
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError, notFound } from '../../../errors.js';

/** The repository root: the nearest folder above this module holding package.json (src/ under tsx, dist/ when built). */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('BUG: no package.json above the portal routes');
    dir = up;
  }
}

const MEDIA_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
};

/** An asset name as the build writes it: no folders, no dot files. */
export const ASSET_NAME = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$';

export interface PortalFile { contentType: string; bytes: Uint8Array }

export class PortalFiles {
  private readonly dir: string;
  private readonly assets = new Map<string, PortalFile>();

  constructor(dir = join(repositoryRoot(), 'dist', 'portal')) {
    this.dir = dir;
  }

  /** The page; 503 portal-not-built when the build has not run. */
  async page(): Promise<Uint8Array> {
    try {
      return await readFile(join(this.dir, 'index.html'));
    } catch {
      throw new ServiceError('portal-not-built', `the portal has not been built (no ${join(this.dir, 'index.html')}): run npm run build`);
    }
  }

  /** A hashed asset, or 404. `name` has been checked against ASSET_NAME. */
  async asset(name: string): Promise<PortalFile> {
    const cached = this.assets.get(name);
    if (cached) return cached;
    const ext = name.slice(name.lastIndexOf('.') + 1);
    const contentType = MEDIA_TYPES[ext];
    const path = join(this.dir, 'assets', name);
    if (!contentType || !(await stat(path).then((s) => s.isFile(), () => false))) throw notFound('portal asset', { name });
    const file = { contentType, bytes: await readFile(path) };
    this.assets.set(name, file);
    return file;
  }
}
