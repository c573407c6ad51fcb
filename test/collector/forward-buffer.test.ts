import t from 'tap';
import { mkdtemp, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForwardBuffer } from '../../src/collector/forward-buffer.js';

const T0 = 1_700_000_000_123_456_789n;

t.test('the forward buffer keeps unacknowledged batches across a restart and replays them in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'historian-fwd-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const types = ['float64', 'string'] as const;
  const a = new ForwardBuffer(dir, types);
  a.append(0, { times: new BigInt64Array([T0, T0 + 1n]), values: new Float64Array([1.5, -2]), quality: new Uint32Array([192, 0]) });
  a.append(1, { times: new BigInt64Array([T0 + 5n]), values: ['B-1001'], quality: new Uint32Array([192]) });
  a.append(0, { times: new BigInt64Array([T0 + 9n]), values: new Float64Array([7]), quality: new Uint32Array([64]) });
  const first = a.read(10);
  t.equal(first.length, 3);
  a.acknowledge(first[0].end);
  a.close();
  // A torn last append (the collector died while writing) is cut off when the buffer reopens.
  await appendFile(join(dir, 'forward.log'), Buffer.from([0x31, 0x46, 0x42, 0x48, 1, 0]));

  const b = new ForwardBuffer(dir, types);
  const rest = b.read(10);
  t.equal(rest.length, 2, 'the acknowledged record is not replayed after a restart');
  t.same([...rest[0].cols.times], [T0 + 5n]);
  t.same(rest[0].cols.values, ['B-1001'], 'string values survive');
  t.same([...rest[1].cols.values as Float64Array], [7]);
  t.same([...rest[1].cols.quality], [64], 'quality survives');
  b.acknowledge(rest[1].end);
  t.equal(b.pendingBytes(), 0, 'everything acknowledged: the buffer is empty');
  t.equal(b.read(10).length, 0);
  b.close();
});
