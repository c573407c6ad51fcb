import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { modelClient } from '../helpers/model.js';
import { parseJson } from '../../src/json/json.js';

interface EventTx { tx_id: bigint | number; committed_ns: bigint | number; principal: string; reason: string; events: Array<{ entity_kind: string; entity_id: string; action: string; details: Record<string, unknown> }> }

/** Reads SSE frames from a streaming fetch until `count` model-tx events arrived. */
async function readEvents(body: ReadableStream<Uint8Array>, count: number): Promise<Array<{ id: string; data: EventTx }>> {
  const reader = body.getReader();
  const out: Array<{ id: string; data: EventTx }> = [];
  let buf = '';
  while (out.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += Buffer.from(value).toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const lines = frame.split('\n');
      if (!lines.some((l) => l === 'event: model-tx')) continue;
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4) ?? '';
      const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      out.push({ id, data: parseJson(Buffer.from(data)) as EventTx });
    }
  }
  await reader.cancel();
  return out;
}

t.test('the model events feed', async (t) => {
  const svc = await startTestService(t);
  const m = modelClient(svc.url);
  const a = await m.ok<{ asset_id: string; tx_id: number | bigint }>('POST', '/v1/model/assets', { name: 'Line 1', reason: 'first line' });
  await m.ok('PATCH', `/v1/model/assets/${a.asset_id}`, { rename: 'Line A', reason: 'naming scheme' });

  t.test('GET lists committed transactions ascending with principal, reason and events', async (t) => {
    const all = await m.ok<EventTx[]>('GET', '/v1/model/events?limit=1000');
    const mine = all.filter((x) => x.events.some((e) => e.entity_id === a.asset_id));
    t.equal(mine.length, 2);
    t.equal(mine[0].reason, 'first line');
    t.equal(mine[0].events[0].action, 'created');
    t.equal(mine[1].events[0].action, 'renamed');
    t.equal(BigInt(mine[0].tx_id), BigInt(a.tx_id), 'the tx_id echoed on the asset is the feed\'s');
    for (let i = 1; i < all.length; i++) t.ok(BigInt(all[i].tx_id) > BigInt(all[i - 1].tx_id), 'ascending');
    const since = await m.ok<EventTx[]>('GET', `/v1/model/events?since_tx=${mine[0].tx_id}&limit=1`);
    t.equal(since.length, 1);
    t.equal(BigInt(since[0].tx_id) > BigInt(mine[0].tx_id), true, 'since_tx is exclusive');
  });

  t.test('subscribe replays from since_tx then streams live commits over SSE', async (t) => {
    const ctrl = new AbortController();
    const res = await fetch(`${svc.url}/v1/model/events/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ since_tx: Number(a.tx_id) - 1 }), signal: ctrl.signal });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const reading = readEvents(res.body as ReadableStream<Uint8Array>, 3);
    await new Promise((r) => setTimeout(r, 100));
    await m.ok('PATCH', `/v1/model/assets/${a.asset_id}`, { retire: true, reason: 'decommissioned' });
    const got = await reading;
    ctrl.abort();
    t.same(got.map((g) => g.data.events[0].action), ['created', 'renamed', 'retired']);
    t.equal(got[2].data.reason, 'decommissioned');
    t.equal(got[2].id, String(got[2].data.tx_id), 'the SSE id is the tx_id');
  });
});
