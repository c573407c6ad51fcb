// The home page: the asset tree (GET /v1/model/tree) with each asset's attributes (an
// attribute opens its ad hoc trend), and the display folders with their displays (GET
// /v1/display-folders, GET /v1/displays?folder=); a display opens in the selected asset.
import { get, post, isMissingRoute, type ResolveAnswer, type TreeNode } from './api.js';

interface Folder { folder_id: string; parent_id: string | null; name: string }
interface DisplayRecord { id: string; folder_id: string; name: string; kind: string }

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export async function showHome(root: HTMLElement, selected: { asset: string | null; folder: string | null }): Promise<void> {
  const treePane = el('section', 'pane tree-pane');
  const detail = el('section', 'pane detail-pane');
  const folders = el('section', 'pane folder-pane');
  root.replaceChildren(treePane, detail, folders);
  treePane.append(el('h2', '', 'Assets'));
  const tree = await get<{ roots: TreeNode[] }>('/v1/model/tree');
  const ul = el('ul', 'tree');
  const add = (n: TreeNode, parent: HTMLElement) => {
    const li = el('li');
    const a = el('a', 'asset', n.name);
    a.href = `/?asset=${n.asset_id}`;
    a.dataset.assetId = n.asset_id;
    a.addEventListener('click', (ev) => { ev.preventDefault(); history.pushState(null, '', a.href); void showAsset(detail, n); markSelected(ul, n.asset_id); });
    li.appendChild(a);
    if (n.children.length) { const sub = el('ul'); for (const c of n.children) add(c, sub); li.appendChild(sub); }
    parent.appendChild(li);
  };
  for (const r of tree.roots) add(r, ul);
  treePane.appendChild(tree.roots.length ? ul : el('p', 'note', 'The model has no assets yet.'));
  const find = (ns: TreeNode[]): TreeNode | null => { for (const n of ns) { if (n.asset_id === selected.asset) return n; const f = find(n.children); if (f) return f; } return null; };
  const current = selected.asset ? find(tree.roots) : null;
  if (current) { markSelected(ul, current.asset_id); void showAsset(detail, current); } else detail.append(el('p', 'note', 'Choose an asset to see its attributes.'));
  await showFolders(folders, selected.folder);
}

function markSelected(ul: HTMLElement, assetId: string): void {
  for (const a of ul.querySelectorAll<HTMLElement>('a.asset')) a.classList.toggle('selected', a.dataset.assetId === assetId);
}

async function showAsset(pane: HTMLElement, asset: TreeNode): Promise<void> {
  pane.replaceChildren(el('h2', '', asset.path));
  const attrs = await post<ResolveAnswer>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: asset.asset_id } } });
  const own = attrs.results.filter((a) => a.asset_id === asset.asset_id);
  if (own.length === 0) { pane.append(el('p', 'note', 'No attributes.')); return; }
  const ul = el('ul', 'attributes');
  for (const a of own) {
    const li = el('li');
    const link = el('a', 'attribute', a.name);
    link.href = `/trend?attribute=${encodeURIComponent(a.attribute_id)}&start=*-8h&end=*`;
    li.append(link, el('span', 'path', ` ${a.path}`));
    ul.appendChild(li);
  }
  pane.append(ul);
}

async function showFolders(pane: HTMLElement, folderId: string | null): Promise<void> {
  pane.replaceChildren(el('h2', '', 'Displays'));
  let folders: Folder[];
  try {
    const answer = await get<Folder[] | { items: Folder[] }>('/v1/display-folders');
    folders = Array.isArray(answer) ? answer : answer.items;
  } catch (e) {
    pane.append(el('p', 'note', isMissingRoute(e) ? 'Display folders are not offered by this service yet.' : `Display folders: ${(e as Error).message}`));
    return;
  }
  const asset = new URLSearchParams(location.search).get('asset');
  const keep = asset ? `&asset=${asset}` : '';
  const children = (parent: string | null) => folders.filter((f) => f.parent_id === parent);
  const here = folders.find((f) => f.folder_id === folderId) ?? null;
  if (here) {
    const up = el('a', 'folder-up', '↑ ' + (here.parent_id ? 'Up' : 'All folders'));
    up.href = here.parent_id ? `/?folder=${here.parent_id}${keep}` : `/${asset ? `?asset=${asset}` : ''}`;
    pane.append(el('h3', '', here.name), up);
  }
  const ul = el('ul', 'folders');
  for (const f of children(here?.folder_id ?? null)) {
    const a = el('a', 'folder', '📁 ' + f.name);
    a.href = `/?folder=${f.folder_id}${keep}`;
    ul.appendChild(el('li')).appendChild(a);
  }
  pane.append(ul);
  if (!here) return;
  const listing = await get<DisplayRecord[] | { items: DisplayRecord[] }>(`/v1/displays?folder=${here.folder_id}`);
  const displays = Array.isArray(listing) ? listing : listing.items;
  const dl = el('ul', 'displays');
  for (const d of displays) {
    const a = el('a', 'display', d.name);
    a.href = `/display/${d.id}${asset ? `?asset=${asset}` : ''}`;
    dl.appendChild(el('li')).appendChild(a);
  }
  pane.append(displays.length ? dl : el('p', 'note', 'No displays in this folder.'));
}
