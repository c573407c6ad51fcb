import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService, request } from '../helpers/service.js';
import { canonicalJson, previewHash } from '../../src/json/canonical-json.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const INT_STR = /^-?[0-9]+$/;
let keyCounter = 0;

t.test('canonical JSON sorts keys, drops whitespace and hashes with SHA-256', async (t) => {
  t.equal(canonicalJson({ b: [1, 'x'], a: { d: null, c: true } }), '{"a":{"c":true,"d":null},"b":[1,"x"]}');
  t.equal(canonicalJson({ s: 'é"\n' }), '{"s":"é\\"\\n"}');
  t.equal(previewHash({ a: 1 }), createHash('sha256').update('{"a":1}').digest('hex'));
});

t.test('administration change sets over HTTP', async (t) => {
  const svc = await startTestService(t);
  const api = (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => request(`${svc.url}${path}`, init);
  const asset = async (name: string, parent?: string) => {
    const r = await api('/v1/model/assets', { method: 'POST', body: { name, ...(parent ? { parent } : {}) } });
    t.equal(r.status, 200, `asset ${name} created`);
    return (r.json as Json).asset_id as string;
  };
  const create = (body: unknown, key = `k-${++keyCounter}`) => api('/v1/admin/change-sets', { method: 'POST', body, headers: { 'idempotency-key': key } });
  const rename = (assetId: string, name: string, reason = 'tidy names') => create({ reason, operations: [{ kind: 'asset.rename', asset_id: assetId, name }] });

  const plant = await asset('Plant');
  const area = await asset('Area 1', plant);
  await asset('Pump A', area);
  await asset('Pump B', area);

  t.test('a create derives the preview, its hash, and is replayed for the same key', async (t) => {
    const body = { reason: 'align with P&ID', operations: [{ kind: 'asset.rename', asset_id: area, name: 'Area 100' }] };
    const r = await create(body, 'same-key');
    t.equal(r.status, 201);
    const cs = r.json as Json;
    t.equal(cs.state, 'preview');
    t.equal(cs.reason, 'align with P&ID');
    t.equal(cs.principal, 'local-administrator', 'the principal subject of disabled mode');
    t.same(cs.operations, body.operations);
    t.match(cs.created_ns, INT_STR);
    t.equal(cs.committed_ns, null);
    t.equal(cs.receipt, null);
    t.equal(cs.preview.changes.length, 1);
    const change = cs.preview.changes[0];
    t.match(change, { resource_kind: 'asset', resource_id: area, before: { name: 'Area 1', path: '/Plant/Area 1' }, after: { name: 'Area 100', path: '/Plant/Area 100' } });
    t.match(change.base_tx, INT_STR);
    t.same(cs.preview.warnings.map((w: Json) => w.code), ['descendant-paths-change']);
    t.equal(cs.preview_hash, previewHash(cs.preview), 'the hash is SHA-256 of the canonical preview');
    t.same(Object.keys(cs).sort(), ['change_set_id', 'committed_ns', 'created_ns', 'operations', 'preview', 'preview_hash', 'principal', 'reason', 'receipt', 'state']);
    const again = await create(body, 'same-key');
    t.equal(again.status, 201);
    t.equal(again.headers.get('x-service-idempotent-replay'), 'true');
    t.equal((again.json as Json).change_set_id, cs.change_set_id, 'the replay returns the same change set');
    const other = await create({ ...body, reason: 'something else' }, 'same-key');
    t.equal(other.status, 409);
    t.equal((other.json as Json).code, 'idempotency-conflict');
    const read = await api(`/v1/admin/change-sets/${cs.change_set_id}`);
    t.same(read.json, cs);
  });

  t.test('a create without Idempotency-Key, with two operations or an unknown kind is 400', async (t) => {
    const noKey = await api('/v1/admin/change-sets', { method: 'POST', body: { reason: 'x', operations: [{ kind: 'asset.rename', asset_id: area, name: 'X' }] } });
    t.equal(noKey.status, 400);
    t.equal((noKey.json as Json).code, 'idempotency-key-required');
    const two = await create({ reason: 'x', operations: [{ kind: 'asset.rename', asset_id: area, name: 'X' }, { kind: 'asset.rename', asset_id: plant, name: 'Y' }] });
    t.equal(two.status, 400);
    const kind = await create({ reason: 'x', operations: [{ kind: 'asset.delete', asset_id: area, name: 'X' }] });
    t.equal(kind.status, 400);
    t.match((kind.json as Json).error, /operations\[0\]\.kind/);
    const slash = await rename(area, 'a/b');
    t.equal(slash.status, 400);
    const missing = await rename('00000000-0000-4000-8000-000000000000', 'X');
    t.equal(missing.status, 404);
    const taken = await rename(area, 'Area 1'.replace('1', '1'));
    t.equal(taken.status, 201, 'renaming to its own name is allowed, with a warning');
    t.same((taken.json as Json).preview.warnings.map((w: Json) => w.code), ['name-unchanged']);
  });

  t.test('a rename onto a sibling name is a name conflict at create', async (t) => {
    const pumpA = (await api(`/v1/model/resolve-path?path=${encodeURIComponent('/Plant/Area 1/Pump A')}`)).json as Json;
    const r = await rename(pumpA.asset_id, 'Pump B');
    t.equal(r.status, 409);
    t.equal((r.json as Json).code, 'name-conflict');
  });

  t.test('a commit with the preview hash renames the asset, writes the receipt and an Operation record', async (t) => {
    const cs = (await rename(area, 'Area 7', 'renumbered')).json as Json;
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(r.status, 200);
    const done = r.json as Json;
    t.equal(done.state, 'committed');
    t.match(done.committed_ns, INT_STR);
    const receipt = done.receipt;
    t.equal(receipt.operation_id, `change:${cs.change_set_id}`);
    t.match(receipt.model_tx, INT_STR);
    t.same(receipt.committed_operations, [{ kind: 'asset.rename', resource_kind: 'asset', resource_id: area, resulting_tx: receipt.model_tx }]);
    t.same(receipt.audit_events, [{ entity_kind: 'asset', entity_id: area, action: 'renamed' }]);
    const projection = (await api(`/v1/model/assets/${area}`)).json as Json;
    t.equal(projection.name, 'Area 7');
    t.equal(projection.path, '/Plant/Area 7');
    t.equal(String(projection.tx_id), receipt.model_tx, 'the asset carries the receipt transaction');
    const events = (await api(`/v1/model/events?since_tx=${BigInt(receipt.model_tx) - 1n}&limit=1`)).json as Json[];
    t.equal(events[0].reason, 'renumbered', 'the model transaction records the change set reason');
    const op = await api(`/v1/operations/change:${cs.change_set_id}`);
    t.equal(op.status, 200);
    t.match(op.json, {
      id: `change:${cs.change_set_id}`, kind: 'change-set.commit', principal: 'local-administrator', reason: 'renumbered', source_change_set_id: cs.change_set_id,
      state: 'completed', progress: { completed: 1, total: 1 }, affected_resources: [{ kind: 'asset', id: area }], cancellable: false,
      detail: { adapter: 'change-set', change_set_id: cs.change_set_id, change_set_state: 'committed' },
      receipt: { adapter: 'change-set', value: receipt }, error: null,
    });
    t.match((op.json as Json).created_ns, INT_STR);
    t.match((op.json as Json).completed_ns, INT_STR);

    t.test('a second commit, or a cancel, of the committed change set is a State conflict', async (t) => {
      const again = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
      t.equal(again.status, 409);
      t.equal((again.json as Json).code, 'conflict');
      t.same((again.json as Json).details, { state: 'committed' });
      const cancel = await api(`/v1/admin/change-sets/${cs.change_set_id}/cancel`, { method: 'POST' });
      t.equal(cancel.status, 409);
      t.same((cancel.json as Json).details, { state: 'committed' });
    });
  });

  t.test('a wrong preview hash is hash-mismatch and changes nothing', async (t) => {
    const cs = (await rename(plant, 'Site')).json as Json;
    const wrong = cs.preview_hash.replace(/^./, (c: string) => (c === '0' ? '1' : '0'));
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: wrong } });
    t.equal(r.status, 409);
    t.equal((r.json as Json).code, 'hash-mismatch');
    t.equal(((await api(`/v1/admin/change-sets/${cs.change_set_id}`)).json as Json).state, 'preview');
    t.equal(((await api(`/v1/model/assets/${plant}`)).json as Json).name, 'Plant');
    const malformed = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: 'ABC' } });
    t.equal(malformed.status, 400);
  });

  t.test('a commit after the asset changed is a Drift conflict with the current revision', async (t) => {
    const pump = await asset('Pump C', area);
    const cs = (await rename(pump, 'Pump C1')).json as Json;
    const patched = await api(`/v1/model/assets/${pump}`, { method: 'PATCH', body: { rename: 'Pump C2' } });
    t.equal(patched.status, 200);
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(r.status, 409);
    const e = r.json as Json;
    t.equal(e.code, 'conflict');
    t.match(e.details.current_tx, INT_STR);
    t.same(e.details.current, { resource_id: pump, revision: String((patched.json as Json).tx_id), name: 'Pump C2', path: '/Plant/Area 7/Pump C2' });
    t.equal(((await api(`/v1/model/assets/${pump}`)).json as Json).name, 'Pump C2', 'the rename was not applied');
    t.equal(((await api(`/v1/admin/change-sets/${cs.change_set_id}`)).json as Json).state, 'preview');
  });

  t.test('a parent rename that changes the path is drift too', async (t) => {
    const pump = await asset('Pump D', area);
    const cs = (await rename(pump, 'Pump D1')).json as Json;
    t.equal((await api(`/v1/model/assets/${area}`, { method: 'PATCH', body: { rename: 'Area 8' } })).status, 200);
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(r.status, 409);
    t.equal((r.json as Json).details.current.path, '/Plant/Area 8/Pump D');
  });

  t.test('a failure after the rename (an Operation id collision) leaves nothing changed, and a retry then commits', async (t) => {
    const pump = await asset('Pump E', area);
    const cs = (await rename(pump, 'Pump E1', 'collision')).json as Json;
    const ctx = svc.service.context;
    // Injected fault: the Operation id the commit will write is already taken.
    await ctx.operations.start({ namespace: 'change', localId: cs.change_set_id, kind: 'test.injected', principal: 'test', detail: { adapter: 'test' } });
    const lastTx = async () => (await ctx.db.query<{ tx: bigint }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0].tx;
    const txBefore = await lastTx();
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(r.status, 500);
    t.equal((r.json as Json).code, 'internal');
    t.equal(await lastTx(), txBefore, 'no model transaction committed');
    const read = (await api(`/v1/model/assets/${pump}`)).json as Json;
    t.equal(read.name, 'Pump E', 'the asset is not renamed (the tree too)');
    t.equal((await api(`/v1/model/resolve-path?path=${encodeURIComponent('/Plant/Area 8/Pump E1')}`)).status, 404);
    const after = (await api(`/v1/admin/change-sets/${cs.change_set_id}`)).json as Json;
    t.equal(after.state, 'preview');
    t.equal(after.receipt, null);
    t.equal(after.committed_ns, null);
    const op = (await api(`/v1/operations/change:${cs.change_set_id}`)).json as Json;
    t.match(op, { kind: 'test.injected', state: 'running', receipt: null }, 'the colliding record is untouched');

    await ctx.db.query('DELETE FROM operation WHERE id = $1', [`change:${cs.change_set_id}`]);
    const retry = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(retry.status, 200);
    const done = retry.json as Json;
    t.equal(done.state, 'committed');
    t.equal(done.receipt.model_tx, String((await lastTx())));
    t.same(done.receipt.audit_events, [{ entity_kind: 'asset', entity_id: pump, action: 'renamed' }]);
    t.equal(((await api(`/v1/model/assets/${pump}`)).json as Json).name, 'Pump E1');
    t.match((await api(`/v1/operations/change:${cs.change_set_id}`)).json, { kind: 'change-set.commit', state: 'completed', receipt: { adapter: 'change-set', value: done.receipt } });
  });

  t.test('a cancelled change set cannot be committed', async (t) => {
    const cs = (await rename(plant, 'Works')).json as Json;
    const c = await api(`/v1/admin/change-sets/${cs.change_set_id}/cancel`, { method: 'POST' });
    t.equal(c.status, 200);
    t.equal((c.json as Json).state, 'cancelled');
    t.equal((c.json as Json).receipt, null);
    const r = await api(`/v1/admin/change-sets/${cs.change_set_id}/commit`, { method: 'POST', body: { preview_hash: cs.preview_hash } });
    t.equal(r.status, 409);
    t.same((r.json as Json).details, { state: 'cancelled' });
    const unknown = await api('/v1/admin/change-sets/00000000-0000-4000-8000-000000000000');
    t.equal(unknown.status, 404);
  });
});
