// Child process for the crash test: writes batches forever and prints each one only
// after store.write resolved (durable). The parent SIGKILLs it mid-stream.
import { SeriesStore } from '../../src/storage/series-store.js';

const [dir, id] = process.argv.slice(2);
const store = SeriesStore.open(dir, { seal: { chunkPoints: 100 } });
await store.createSeries({ id, type: 'float64', writableClass: 'collector' });
const T0 = 1_700_000_000_000_000_000n;
for (let b = 0; ; b++) {
  const n = 37;
  const times = BigInt64Array.from({ length: n }, (_, i) => T0 + BigInt(b * n + i) * 1_000_000n);
  const values = Float64Array.from({ length: n }, (_, i) => (b * n + i) * 0.1);
  const r = await store.write([{ series: id, times, values, quality: new Uint32Array(n).fill(192) }], { principal: 'crash' });
  if (r.accepted !== n) throw new Error('not all accepted');
  process.stdout.write(`ack ${b}\n`);
}
