// The portal's entry: who is calling (GET /v1/auth/whoami; a 401 shows the login), then
// the view the path names: / (asset tree and display folders), /trend?attribute=…
// (an ad hoc trend), /display/{id}?asset=… (a display in a context asset).
import 'uplot/dist/uPlot.min.css';
import './portal.css';
import { ApiError, get, isUnauthenticated } from './api.js';
import { showLogin, logout } from './login.js';
import { showHome } from './browse.js';
import { drawDisplay, errorNote, type DisplayDocument, type DrawnDisplay } from './display.js';
import { live } from './live.js';
import { button } from './time-bar.js';

interface WhoAmI { principal: { subject: string; display: string }; auth_mode: string }

/** What the browser tests and the bench read: the drawn display, live counters. */
interface PortalHandle { display: DrawnDisplay | null; live: typeof live; ready: Promise<void> }
declare global { interface Window { portal: PortalHandle } }

const app = document.getElementById('app') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
const crumbs = document.getElementById('crumbs') as HTMLElement;

async function adHocDocument(attribute: string): Promise<DisplayDocument> {
  let id = attribute, label = attribute;
  if (attribute.includes('/')) {
    const a = await get<{ attribute_id?: string; path: string }>(`/v1/model/resolve-path?path=${encodeURIComponent(attribute)}`);
    if (!a.attribute_id) throw new ApiError(400, 'invalid-request', `${attribute} is an asset, not an attribute (write /Site/Area/Pump-101|Flow)`);
    id = a.attribute_id; label = a.path;
  }
  return {
    kind: 'display', meta: { name: label, layout: 'structured' }, time: { start: '*-8h', end: '*', navigator: { visible: true } },
    widgets: [{ type: 'trend', id: 'trend', bindings: { kind: 'trend', traces: [{ attribute: { kind: 'attribute-id', attribute_id: id }, label: attribute.includes('/') ? label : '' }] }, x: { title: label } }],
  };
}

/** A display's record is asked for while whoami is in flight: one round trip less before the widgets read. */
let early: { id: string; record: Promise<{ name: string; document: DisplayDocument }> } | null = null;

async function route(): Promise<void> {
  const q = new URLSearchParams(location.search);
  const path = location.pathname;
  if (path === '/trend') {
    const attribute = q.get('attribute');
    if (!attribute) { app.replaceChildren(errorNote('Name an attribute: /trend?attribute=<id or /Site/Area/Asset|Attribute>&start=*-8h&end=*')); return; }
    crumbs.textContent = `Trend · ${attribute}`;
    const doc = await adHocDocument(attribute);
    window.portal.display = await drawDisplay(app, doc, { contextAsset: null, displayId: null, start: q.get('start') ?? undefined, end: q.get('end') ?? undefined });
    await window.portal.display.drawn;
    return;
  }
  const m = /^\/display\/([0-9a-f-]{36})$/i.exec(path);
  if (m) {
    const record = await (early?.id === m[1] ? early.record : get<{ name: string; document: DisplayDocument }>(`/v1/displays/${m[1]}`));
    early = null;
    crumbs.textContent = `Display · ${record.name}`;
    document.title = `${record.name} · Historian`;
    window.portal.display = await drawDisplay(app, record.document, { contextAsset: q.get('asset'), displayId: m[1], start: q.get('start') ?? undefined, end: q.get('end') ?? undefined });
    await window.portal.display.drawn;
    return;
  }
  crumbs.textContent = '';
  await showHome(app, { asset: q.get('asset'), folder: q.get('folder') });
}

async function start(): Promise<void> {
  const displayId = /^\/display\/([0-9a-f-]{36})$/i.exec(location.pathname)?.[1];
  if (displayId) {
    early = { id: displayId, record: get<{ name: string; document: DisplayDocument }>(`/v1/displays/${displayId}`) };
    early.record.catch(() => undefined); // a 401 here is answered by the login below
  }
  let me: WhoAmI;
  try {
    me = await get<WhoAmI>('/v1/auth/whoami');
  } catch (e) {
    if (isUnauthenticated(e)) { await showLogin(app, () => location.reload()); return; }
    throw e;
  }
  who.replaceChildren(document.createTextNode(me.principal.display || me.principal.subject));
  if (me.auth_mode !== 'disabled') who.append(' ', button('Sign out', () => void logout()));
  await route();
}

window.portal = { display: null, live, ready: Promise.resolve() };
window.portal.ready = start().catch((e) => {
  app.replaceChildren(errorNote(e instanceof Error ? e.message : String(e)));
  document.body.dataset.failed = 'true';
});
window.addEventListener('popstate', () => { void route(); });
