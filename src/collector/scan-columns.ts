// Several streams' points (of one value type) as the columns of one scan batch
// (DataBatch.streams): what a collector that read its tags at once sends in one message.
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { OutgoingColumns } from './collector-client.js';

export interface StreamPoints {
  stream: number;
  cols: OutgoingColumns;
}

export interface ScanColumns {
  streams: Uint32Array;
  cols: OutgoingColumns & { quality: Uint32Array | null };
}

const GOOD = 192;

/** The parts' points one after the other, each tagged with its stream; quality is left out when every part sends none. */
export function joinScan(type: ValueType, parts: readonly StreamPoints[]): ScanColumns {
  let n = 0, anyQuality = false;
  for (const p of parts) { n += p.cols.times.length; if (p.cols.quality !== null) anyQuality = true; }
  const streams = new Uint32Array(n);
  const times = new BigInt64Array(n);
  const quality = anyQuality ? new Uint32Array(n) : null;
  let values: OutgoingColumns['values'];
  switch (type) {
    case 'float64': values = new Float64Array(n); break;
    case 'int64': values = new BigInt64Array(n); break;
    case 'boolean': values = new Uint8Array(n); break;
    case 'enum': values = new Int32Array(n); break;
    case 'string': values = new Array<string>(n); break;
  }
  let at = 0;
  for (const { stream, cols } of parts) {
    const k = cols.times.length;
    streams.fill(stream, at, at + k);
    times.set(cols.times, at);
    if (Array.isArray(values)) for (let i = 0; i < k; i++) values[at + i] = (cols.values as string[])[i];
    // one typed array into another of the same kind (the parts are all of `type`)
    else (values as Exclude<OutgoingColumns['values'], string[]>).set(cols.values as never, at);
    if (quality !== null) { if (cols.quality === null) quality.fill(GOOD, at, at + k); else quality.set(cols.quality, at); }
    at += k;
  }
  return { streams, cols: { times, values, quality } };
}
