// The HTTP side of bench/storage.ts, run as a second process so that the client's work
// is not charged to the service's event loop. Argument: one JSON object (Plan below).
// Prints one JSON object of figures on stdout.
//
// Raw reads use a minimal HTTP/1.1 keep-alive client over net.Socket. JSON bodies are read
// two ways: parsed whole ('parse': every byte through a complete JSON parser, every number
// converted, bench/raw-json-parse.ts; the *_json_parsed_* figures, what a real client pays)
// and counted without parsing ('rows': the per-point prefix {"ts_ns": searched with
// Buffer.indexOf; the *_json_* figures, kept comparable with earlier runs). msgpack row
// bodies are counted by their prefix (fixmap + "ts_ns"). The next page's cursor comes from
// the parse, or from the body's tail. Columnar bodies (layout=columns) carry their point
// count in a `count` member ahead of the columns: the client reads it from the body's
// head, as a real client sizes its arrays.
import { connect, type Socket } from 'node:net';
import { parseRawJsonBody } from './raw-json-parse.js';

interface Plan {
  url: string;
  /** Every series of the fleet, read whole, one request each. */
  fleet: string[];
  startNs: string;
  endNs: string;
  bigSeries: string;
  bigStartNs: string;
  bigEndNs: string;
  /** Points per page of the big series. */
  pageLimit: number;
  renders: number;
  rollupSeries: string[];
  /** Parallel connections (and parallel page streams of the big series). */
  connections: number;
  /** Measured runs of each raw read kind; its figures are those of the median run. */
  repeat: number;
}

const plan = JSON.parse(process.argv[2]) as Plan;
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const JSON_TYPE = 'application/json', MSGPACK_TYPE = 'application/x-msgpack';
const MARK = { [JSON_TYPE]: Buffer.from('{"ts_ns":', 'latin1'), [MSGPACK_TYPE]: Buffer.from([0x83, 0xa5, 116, 115, 95, 110, 115]) };
/** How a reply's points are counted: per-point prefix, the `count` member of a columnar body, or a full JSON parse. */
type Counting = 'rows' | 'columns' | 'parse';
const COUNT_KEY = Buffer.from([0xa5, ...Buffer.from('count')]);
const HEAD = 256;

/** The `count` member of a columnar JSON body's head, or -1 when not there yet. */
function jsonCountOf(head: Buffer): number {
  const m = /"count": *(\d+)[,}]/.exec(head.toString('latin1'));
  return m ? Number(m[1]) : -1;
}

/** The `count` member of a columnar body's head (a msgpack uint), or -1 when not there yet. */
function countOf(head: Buffer): number {
  const at = head.indexOf(COUNT_KEY);
  if (at < 0 || at + COUNT_KEY.length + 5 > head.length) return -1;
  const p = at + COUNT_KEY.length, t = head[p];
  if (t < 0x80) return t;
  if (t === 0xcc) return head[p + 1];
  if (t === 0xcd) return head.readUInt16BE(p + 1);
  if (t === 0xce) return head.readUInt32BE(p + 1);
  throw new Error(`unexpected msgpack count type 0x${t.toString(16)}`);
}
const TAIL = 512;

interface Reply { status: number; bytes: number; points: number; tail: Buffer; /** From the parse ('parse' only). */ cursor?: string | null }

/** One keep-alive connection; requests run one after another on it. */
class Connection {
  private readonly socket: Socket;
  private pending: { resolve: (r: Reply) => void; reject: (e: Error) => void; mark: Buffer; counting: Counting; json: boolean } | null = null;
  /** First bytes of a columnar body, until its count is read. */
  private bodyHead: Buffer | null = null;
  private head: Buffer | null = Buffer.alloc(0);
  private left = 0;
  private status = 0;
  private bytes = 0;
  private points = 0;
  private carry = Buffer.alloc(0);
  private tail = Buffer.alloc(0);
  /** The whole body when parsing ('parse'); reused across replies, grown to the largest. */
  private whole = Buffer.alloc(0);

  constructor(host: string, port: number) {
    // onread with one 1 MiB buffer per connection: no Buffer per read and fewer, larger
    // reads (halved the client's CPU per MB against 'data' events, 2025-11-21)
    const readBuffer = Buffer.alloc(1 << 20);
    this.socket = connect({ host, port, noDelay: true, onread: { buffer: readBuffer, callback: (n: number, buf: Uint8Array) => { this.onData(Buffer.from(buf.buffer, buf.byteOffset, n)); return true; } } });
    this.socket.on('error', (e) => this.pending?.reject(e));
  }

  get(path: string, accept: string, counting: Counting = 'rows'): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, mark: accept === MSGPACK_TYPE ? MARK[MSGPACK_TYPE] : MARK[JSON_TYPE], counting, json: accept === JSON_TYPE };
      this.bodyHead = counting === 'columns' ? Buffer.alloc(0) : null;
      this.head = Buffer.alloc(0);
      this.bytes = 0; this.points = 0; this.carry = Buffer.alloc(0); this.tail = Buffer.alloc(0);
      this.socket.write(`GET ${path} HTTP/1.1\r\nhost: bench\r\naccept: ${accept}\r\n\r\n`);
    });
  }

  /** `chunk` is a view of the read buffer, valid during this call only. */
  private onData(chunk: Buffer): void {
    if (this.head !== null) {
      const all = Buffer.concat([this.head, chunk]); // a copy: the rest of this chunk is read from `all` below
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) { this.head = all; return; }
      const text = all.subarray(0, end).toString('latin1');
      this.status = Number(text.slice(9, 12));
      const m = /\r\ncontent-length: *(\d+)/i.exec(text);
      if (!m) { this.pending?.reject(new Error(`no content-length in ${text}`)); return; }
      this.left = Number(m[1]);
      this.head = null;
      if (this.pending?.counting === 'parse' && this.whole.length < this.left) this.whole = Buffer.allocUnsafe(this.left);
      chunk = all.subarray(end + 4);
    }
    this.body(chunk);
  }

  private body(chunk: Buffer): void {
    const p = this.pending!;
    const part = chunk.subarray(0, this.left);
    this.left -= part.length;
    this.bytes += part.length;
    if (p.counting === 'columns') this.columnsCount(part);
    else if (p.counting === 'parse') { this.whole.set(part, this.bytes - part.length); }
    else this.rowsCount(part, p.mark);
    this.tail = part.length >= TAIL ? Buffer.from(part.subarray(part.length - TAIL)) : Buffer.concat([this.tail, part]).subarray(-TAIL);
    if (this.left === 0) {
      this.pending = null;
      if (this.bodyHead !== null) { const n = p.json ? jsonCountOf(this.bodyHead) : countOf(this.bodyHead); if (n < 0) { p.reject(new Error('columnar body without count')); return; } this.points = n; }
      if (p.counting === 'parse' && this.status === 200) {
        let parsed;
        try { parsed = parseRawJsonBody(this.whole.subarray(0, this.bytes)); } catch (e) { p.reject(e as Error); return; }
        p.resolve({ status: this.status, bytes: this.bytes, points: parsed.points, tail: this.tail, cursor: parsed.nextCursor });
        return;
      }
      p.resolve({ status: this.status, bytes: this.bytes, points: this.points, tail: this.tail });
    }
  }

  private columnsCount(part: Buffer): void {
    if (this.bodyHead === null) return;
    this.bodyHead = Buffer.concat([this.bodyHead, part.subarray(0, HEAD - this.bodyHead.length)]);
    const n = this.pending!.json ? jsonCountOf(this.bodyHead) : countOf(this.bodyHead);
    if (n >= 0) { this.points = n; this.bodyHead = null; }
  }

  private rowsCount(part: Buffer, m: Buffer): void {
    // the prefix may straddle two chunks: search the last (mark - 1) bytes of the previous one too
    if (this.carry.length > 0) {
      const joint = Buffer.concat([this.carry, part.subarray(0, m.length - 1)]);
      for (let i = joint.indexOf(m); i >= 0; i = joint.indexOf(m, i + 1)) this.points++;
    }
    for (let i = part.indexOf(m); i >= 0; i = part.indexOf(m, i + m.length)) this.points++;
    this.carry = Buffer.from(part.subarray(Math.max(0, part.length - (m.length - 1))));
  }

  close(): void { this.socket.destroy(); }
}

/** The next page's cursor from the end of a raw body, or null on the last page. */
function cursorOf(tail: Buffer, accept: string): string | null {
  if (accept === JSON_TYPE) {
    const m = /"next_cursor":(?:null|"([^"]*)")\}$/.exec(tail.toString('latin1'));
    if (!m) throw new Error('raw JSON body without next_cursor');
    return m[1] ?? null;
  }
  const key = Buffer.from([0xab, ...Buffer.from('next_cursor')]);
  const at = tail.lastIndexOf(key);
  if (at < 0) throw new Error('raw msgpack body without next_cursor');
  const v = tail.subarray(at + key.length);
  if (v[0] === 0xc0) return null;
  if ((v[0] & 0xe0) === 0xa0) return v.subarray(1, 1 + (v[0] & 0x1f)).toString('latin1');
  if (v[0] === 0xd9) return v.subarray(2, 2 + v[1]).toString('latin1');
  throw new Error(`unexpected msgpack cursor type 0x${v[0].toString(16)}`);
}

const { hostname, port } = new URL(plan.url);
const conns = Array.from({ length: plan.connections }, () => new Connection(hostname, Number(port)));

function check(r: Reply, what: string): Reply {
  if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status}: ${r.tail.toString('latin1')}`);
  return r;
}

interface Rate { pointsPerS: number; bytesPerPoint: number; points: number; clientCpuShare: number; seconds: number }

/** Wall-clock windows of the raw phases (epoch ms), for the service's CPU in each. */
const phases: Record<string, [number, number]> = {};
const epochMs = () => performance.timeOrigin + performance.now();

async function timed(name: string, work: () => Promise<{ points: number; bytes: number }>): Promise<Rate> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const e0 = epochMs();
  const { points, bytes } = await work();
  // repeated runs of one kind share its window
  phases[name] = [phases[name]?.[0] ?? e0, epochMs()];
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { pointsPerS: points / s, bytesPerPoint: bytes / points, points, clientCpuShare: (c.user + c.system) / 1e6 / s, seconds: s };
}

/** Every fleet series read whole, one request at a time per connection. */
function fleetRead(accept: string, name: string, counting: Counting = 'rows', columns = counting === 'columns'): Promise<Rate> {
  const layout = columns ? '&layout=columns' : '';
  return timed(name, async () => {
    const queue = [...plan.fleet];
    let points = 0, bytes = 0;
    await Promise.all(conns.map(async (c) => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        const r = check(await c.get(`/v1/series/${id}/raw?start_ns=${plan.startNs}&end_ns=${plan.endNs}&limit=1000000${layout}`, accept, counting), 'fleet raw');
        points += r.points; bytes += r.bytes;
      }
    }));
    return { points, bytes };
  });
}

/** The big series in one time slice per connection, each paged with its cursor. */
function bigRead(accept: string, name: string, counting: Counting = 'rows', columns = counting === 'columns'): Promise<Rate> {
  const layout = columns ? '&layout=columns' : '';
  const a = BigInt(plan.bigStartNs), b = BigInt(plan.bigEndNs), n = BigInt(conns.length);
  const slices = conns.map((_, k) => [a + ((b - a) * BigInt(k)) / n, a + ((b - a) * BigInt(k + 1)) / n]);
  return timed(name, async () => {
    let points = 0, bytes = 0;
    await Promise.all(slices.map(async ([from, to], k) => {
      let cursor: string | null = null;
      do {
        const r = check(await conns[k].get(`/v1/series/${plan.bigSeries}/raw?start_ns=${from}&end_ns=${to}&limit=${plan.pageLimit}${layout}${cursor ? `&cursor=${cursor}` : ''}`, accept, counting), 'big raw');
        points += r.points; bytes += r.bytes;
        cursor = r.cursor !== undefined ? r.cursor : cursorOf(r.tail, accept);
      } while (cursor !== null);
    }));
    return { points, bytes };
  });
}

/** Reads of one point each, over every connection: what a request costs besides its points. */
function onePointReads(name: string, requests: number): Promise<Rate & { p50: number }> {
  const times: number[] = [];
  return timed(name, async () => {
    let left = requests, points = 0, bytes = 0;
    await Promise.all(conns.map(async (c) => {
      while (left > 0) {
        const id = plan.fleet[--left % plan.fleet.length];
        const t0 = performance.now();
        const r = check(await c.get(`/v1/series/${id}/raw?start_ns=${plan.startNs}&end_ns=${plan.endNs}&limit=1`, MSGPACK_TYPE), 'one-point raw');
        times.push(performance.now() - t0);
        points += r.points; bytes += r.bytes;
      }
    }));
    return { points, bytes };
  }).then((rate) => ({ ...rate, p50: pct(times, 0.5) }));
}

async function latencies(paths: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const path of paths) {
    const t0 = performance.now();
    check(await conns[0].get(path, JSON_TYPE), path);
    out.push(performance.now() - t0);
  }
  return out;
}

/** The run of median throughput among plan.repeat runs of `read`, with every run's rate. */
async function median(read: () => Promise<Rate>): Promise<Rate & { runs: number[] }> {
  const rates: Rate[] = [];
  for (let i = 0; i < Math.max(1, plan.repeat); i++) rates.push(await read());
  const sorted = [...rates].sort((a, b) => a.pointsPerS - b.pointsPerS);
  return { ...sorted[(sorted.length - 1) >> 1], runs: rates.map((r) => r.pointsPerS) };
}

/** A read kind's figures under its output prefix: the median run's, and every run's rate (M points/s). */
function figures(prefix: string, m: Rate & { runs: number[] }): Record<string, number | string> {
  return {
    [`${prefix}_points_per_s`]: Math.round(m.pointsPerS), [`${prefix}_points`]: m.points, [`${prefix}_bytes_per_point`]: +m.bytesPerPoint.toFixed(2),
    [`${prefix}_client_cpu_share`]: +m.clientCpuShare.toFixed(2), [`${prefix}_runs_m_points_per_s`]: m.runs.map((x) => (x / 1e6).toFixed(1)).join('/'),
  };
}

async function main() {
  await fleetRead(JSON_TYPE, 'warm-up_fleet_json'); // warm-up: worker code, body slabs (grown to the largest body), page cache
  await bigRead(JSON_TYPE, 'warm-up_big_json');
  const fleetJson = await median(() => fleetRead(JSON_TYPE, 'raw_fleet_json'));
  const fleetJsonParsed = await median(() => fleetRead(JSON_TYPE, 'raw_fleet_json_parsed', 'parse'));
  await fleetRead(MSGPACK_TYPE, 'warm-up_fleet_msgpack');
  const fleetMsgpack = await median(() => fleetRead(MSGPACK_TYPE, 'raw_fleet_msgpack'));
  const bigJson = await median(() => bigRead(JSON_TYPE, 'raw_big_json'));
  const bigJsonParsed = await median(() => bigRead(JSON_TYPE, 'raw_big_json_parsed', 'parse'));
  const bigMsgpack = await median(() => bigRead(MSGPACK_TYPE, 'raw_big_msgpack'));
  await bigRead(MSGPACK_TYPE, 'warm-up_big_columns', 'columns'); // the workers' column scratch grows to a page once
  await fleetRead(MSGPACK_TYPE, 'warm-up_fleet_columns', 'columns');
  const fleetColumns = await median(() => fleetRead(MSGPACK_TYPE, 'raw_fleet_columns', 'columns'));
  const bigColumns = await median(() => bigRead(MSGPACK_TYPE, 'raw_big_columns', 'columns'));
  await bigRead(JSON_TYPE, 'warm-up_big_json_columns', 'columns'); // the workers' column text buffers grow to a page once
  await fleetRead(JSON_TYPE, 'warm-up_fleet_json_columns', 'columns');
  const fleetJsonColumns = await median(() => fleetRead(JSON_TYPE, 'raw_fleet_json_columns', 'columns'));
  const fleetJsonColumnsParsed = await median(() => fleetRead(JSON_TYPE, 'raw_fleet_json_columns_parsed', 'parse', true));
  const bigJsonColumns = await median(() => bigRead(JSON_TYPE, 'raw_big_json_columns', 'columns'));
  const onePoint = await onePointReads('raw_one_point', 4000);
  const renderPath = `/v1/series/${plan.bigSeries}/render?start_ns=${plan.bigStartNs}&end_ns=${plan.bigEndNs}&width=1000`;
  // The first renders of each worker run cold (JIT, the worker's caches): 20-50 ms each,
  // which made p99 of 50 samples the cold start. Reported apart, then the warm figures.
  let e0 = epochMs();
  const renderCold = await latencies(Array.from({ length: 4 }, () => renderPath));
  await latencies(Array.from({ length: 6 }, () => renderPath));
  const render = await latencies(Array.from({ length: plan.renders }, () => renderPath));
  phases.render = [e0, epochMs()];
  // Rollups as render: with 50 samples p99 was their largest, so one read made it (46-62 ms
  // against a p50 of 0.4-0.5 in some runs: each worker's first rollup reads run cold, and a
  // stall of the box lands on some read). Cold reads are reported apart; p50/p99 from 200.
  const rollupPath = (i: number) => `/v1/series/${plan.rollupSeries[i % plan.rollupSeries.length]}/rollups?start_ns=${plan.startNs}&end_ns=${plan.endNs}&interval=1h`;
  e0 = epochMs();
  const rollupCold = await latencies(Array.from({ length: 4 }, (_, i) => rollupPath(i)));
  await latencies(Array.from({ length: 6 }, (_, i) => rollupPath(4 + i)));
  const rollups = await latencies(Array.from({ length: 200 }, (_, i) => rollupPath(i)));
  phases.rollups = [e0, epochMs()];
  for (const c of conns) c.close();
  const r = (x: number) => Math.round(x);
  const f = (x: number) => +x.toFixed(2);
  process.stdout.write(JSON.stringify({
    ...figures('raw_fleet_json', fleetJson), ...figures('raw_fleet_json_parsed', fleetJsonParsed), ...figures('raw_fleet_msgpack', fleetMsgpack),
    ...figures('raw_big_json', bigJson), ...figures('raw_big_json_parsed', bigJsonParsed), ...figures('raw_big_msgpack', bigMsgpack),
    ...figures('raw_fleet_columns', fleetColumns), ...figures('raw_big_columns', bigColumns),
    ...figures('raw_fleet_json_columns', fleetJsonColumns), ...figures('raw_fleet_json_columns_parsed', fleetJsonColumnsParsed), ...figures('raw_big_json_columns', bigJsonColumns),
    raw_one_point_points: onePoint.points, raw_one_point_requests_per_s: r(onePoint.pointsPerS), raw_one_point_p50_ms: f(onePoint.p50), raw_one_point_client_cpu_share: f(onePoint.clientCpuShare),
    raw_big_page_points: plan.pageLimit, raw_connections: plan.connections,
    render_http_cold_first_ms: f(renderCold[0]), render_http_cold_max_ms: f(Math.max(...renderCold)),
    render_http_p50_ms: f(pct(render, 0.5)), render_http_p99_ms: f(pct(render, 0.99)),
    rollup_http_cold_first_ms: f(rollupCold[0]), rollup_http_cold_max_ms: f(Math.max(...rollupCold)),
    rollup_http_p50_ms: f(pct(rollups, 0.5)), rollup_http_p99_ms: f(pct(rollups, 0.99)),
    phases,
  }));
}

main().catch((e) => { process.stderr.write(String(e?.stack ?? e) + '\n'); process.exit(1); });
