// BodySink: writes that land exactly at the end of the buffer grow it, with nothing lost
// (a separator written when a snapshot's items filled the buffer to the byte was dropped),
// and ranges of pre-encoded bytes.
import t from 'tap';
import { BodySink } from '../src/body-sink.js';

t.test('a byte written when the buffer is exactly full grows it and keeps every byte', async (t) => {
  const sink = new BodySink(8);
  sink.ascii('[1234567');
  t.equal(sink.pos, sink.buf.byteLength, 'full to the byte');
  sink.byte(0x2c);
  sink.ascii('8]');
  t.equal(Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1'), '[1234567,8]');
});

t.test('growth through a caller-given slab keeps the bytes written so far', async (t) => {
  const grown: number[] = [];
  const sink = new BodySink(4, (used, need) => {
    grown.push(need);
    const next = new Uint8Array(need * 2);
    next.set(sink.buf.subarray(0, used));
    return next;
  });
  for (let i = 0; i < 100; i++) { if (i > 0) sink.byte(0x2c); sink.ascii(String(i % 10)); }
  const text = Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1');
  t.equal(text, Array.from({ length: 100 }, (_, i) => String(i % 10)).join(','));
  t.ok(grown.length > 0, 'the slab grew');
});

t.test('a range of pre-encoded bytes lands whole past the end of the buffer', async (t) => {
  const text = Buffer.from('{"start_ns":1,"end_ns":2}{"start_ns":2,"end_ns":3}', 'latin1');
  const sink = new BodySink(8);
  sink.ascii('[');
  sink.bytesRange(text, 25, 50);
  sink.byte(0x2c);
  sink.bytesRange(text, 0, 25);
  sink.bytesRange(text, 7, 7);
  sink.ascii(']');
  t.equal(Buffer.from(sink.buf.subarray(0, sink.pos)).toString('latin1'), '[{"start_ns":2,"end_ns":3},{"start_ns":1,"end_ns":2}]');
});
