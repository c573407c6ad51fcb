// Headless Chromium for the portal's browser tests and bench: Debian's system browser
// driven by playwright-core (no browser download), one launch per file, a fresh profile.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.PORTAL_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set PORTAL_CHROMIUM)`;
}

/** Builds dist/portal from portal/ (well under a second), so the tests draw the current sources. */
export function buildPortal(): void {
  const r = spawnSync(process.execPath, [join(import.meta.dirname, '../../scripts/build-portal.mjs')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the portal build failed: ${r.stderr}`);
}

export interface Browser { context: BrowserContext; page: Page; problems: string[]; close(): Promise<void> }

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'portal-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  // Script errors and Content-Security-Policy refusals: the tests assert there are none.
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 40[14]/.test(m.text())) problems.push(`console: ${m.text()}`); });
  return {
    context, page, problems,
    async close() { await context.close(); rmSync(profile, { recursive: true, force: true }); },
  };
}

/**
 * Pixels drawn in a widget's data colours (its `data-ink`), counted on every canvas of its
 * tile: axes, grid lines and labels are grey, so only the data counts. `heat` counts any
 * strongly coloured pixel (a heatmap's scale).
 */
// Runs in the page (plain JavaScript: the test's TypeScript has no DOM types).
const INK_PIXELS = `(id) => {
  const tile = document.querySelector('[data-widget-id="' + id + '"]');
  if (!tile) return -1;
  const ink = tile.dataset.ink || '';
  const inks = ink.split(',').filter((c) => c.startsWith('#')).map((c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)));
  const heat = ink.includes('heat');
  let n = 0;
  for (const canvas of tile.querySelectorAll('canvas')) {
    const ctx = canvas.getContext('2d');
    if (!ctx || canvas.width === 0 || canvas.height === 0) continue;
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] < 128) continue;
      const r = px[i], g = px[i + 1], b = px[i + 2];
      if (heat && Math.max(r, g, b) - Math.min(r, g, b) > 80) { n++; continue; }
      for (const c of inks) if (Math.abs(r - c[0]) + Math.abs(g - c[1]) + Math.abs(b - c[2]) < 60) { n++; break; }
    }
  }
  return n;
}`;

/**
 * Pixels drawn in a widget's data colours (its `data-ink`), counted on every canvas of its
 * tile: axes, grid lines and labels are grey, so only the data counts. `heat` counts any
 * strongly coloured pixel (a heatmap's scale).
 */
export async function inkPixels(page: Page, widgetId: string): Promise<number> {
  return page.evaluate(`(${INK_PIXELS})(${JSON.stringify(widgetId)})`) as Promise<number>;
}

/** Runs `code` (an async function body, plain JavaScript) in the page and returns its value. */
export async function inPage<T>(page: Page, code: string): Promise<T> {
  return page.evaluate(`(async () => { ${code} })()`) as Promise<T>;
}
