// Property tests of the episode query against brute force on random episodes (real model
// database: PostgreSQL when DATABASE_URL is set, else PGlite): overlap with a range, an
// asset set, states, keyset paging in small pages, and as of an earlier transaction; and
// the overlay's u grid against its definition.
import t from 'tap';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { testDb } from '../helpers/db.js';
import { migrate } from '../../src/model/migrate.js';
import { queryEpisodes, type EpisodeQuery } from '../../src/episodes/episode-query.js';
import type { EpisodeState } from '../../src/episodes/episode-store.js';
import { gridInstants } from '../../src/workers/tasks/read-overlay-task.js';
import { uValues } from '../../src/episodes/overlay-columns.js';

const ASSETS: string[] = Array.from({ length: 5 }, () => randomUUID());
const TEMPLATE = randomUUID();

interface Row { id: string; asset: string; state: EpisodeState; start: bigint; end: bigint | null }

const rowArb = fc.record({
  asset: fc.integer({ min: 0, max: ASSETS.length - 1 }),
  start: fc.integer({ min: 0, max: 1000 }),
  length: fc.option(fc.integer({ min: 1, max: 300 }), { nil: null, freq: 5 }),
  void: fc.boolean(),
});

t.test('overlap, assets, states and paging agree with brute force; as of a transaction too', async (t) => {
  const db = await testDb(t);
  await migrate(db);
  const tx = async () => (await db.query<{ tx_id: bigint }>("INSERT INTO model_tx (committed_ns, principal, reason) VALUES (1, 'test', 'x') RETURNING tx_id")).rows[0].tx_id;
  await db.query("INSERT INTO episode_template_version (template_id, version, name, family, definition, tx_from) VALUES ($1, 1, 'Run', 'run', '{}'::jsonb, $2)", [TEMPLATE, await tx()]);

  /** Writes the episodes as the store does (one statement per table): a version valid from a transaction, the current index, the span bound. */
  const write = async (rows: Row[]) => {
    const txId = await tx();
    const data = JSON.stringify(rows.map((r) => ({ id: r.id, asset: r.asset, state: r.state, start: String(r.start), end: r.end === null ? null : String(r.end) })));
    const from = `jsonb_to_recordset($1::jsonb) AS r(id uuid, asset uuid, state text, start bigint, "end" bigint)`;
    await db.query(`INSERT INTO episode_version (episode_id, version, template_id, template_version, name, state, start_ns, end_ns, parent_id, assets, attributes, void_reason, origin, tx_from)
      SELECT r.id, 1, $2, 1, 'e', r.state, r.start, r."end", NULL, jsonb_build_array(jsonb_build_object('role', 'unit', 'asset_id', r.asset)), '{}'::jsonb, NULL, 'manual', $3 FROM ${from}`, [data, TEMPLATE, txId]);
    await db.query(`INSERT INTO episode_asset (episode_id, asset_id, role, template_id, state, start_ns, end_ns) SELECT r.id, r.asset, 'unit', $2, r.state, r.start, r."end" FROM ${from}`, [data, TEMPLATE]);
    await db.query(`UPDATE episode_span_bound SET max_span_ns = GREATEST(max_span_ns, COALESCE((SELECT max(r."end" - r.start) FROM ${from}), 0))`, [data]);
    return txId;
  };

  const all = async (q: Omit<EpisodeQuery, 'after' | 'limit'>, limit: number): Promise<string[]> => {
    const out: string[] = [];
    let after: EpisodeQuery['after'] = null;
    for (;;) {
      const page = await queryEpisodes(db, { ...q, after, limit });
      out.push(...page.items.map((e) => e.id));
      if (!page.more) return out;
      const last = page.items[page.items.length - 1];
      after = { startNs: last.start_ns, id: last.id };
    }
  };

  await fc.assert(fc.asyncProperty(
    fc.array(rowArb, { minLength: 0, maxLength: 25 }),
    fc.array(rowArb, { minLength: 0, maxLength: 5 }),
    fc.integer({ min: -100, max: 1200 }), fc.integer({ min: 1, max: 400 }),
    fc.subarray([0, 1, 2, 3, 4], { minLength: 1 }),
    fc.subarray<EpisodeState>(['open', 'closed', 'void'], { minLength: 1 }),
    fc.integer({ min: 1, max: 7 }),
    async (first, later, from, width, assetIdx, states, limit) => {
      await db.exec('DELETE FROM episode_version; DELETE FROM episode_asset; UPDATE episode_span_bound SET max_span_ns = 0');
      const toRows = (xs: typeof first): Row[] => xs.map((x) => ({
        id: randomUUID(), asset: ASSETS[x.asset], start: BigInt(x.start), end: x.length === null ? null : BigInt(x.start + x.length),
        state: x.void ? 'void' : x.length === null ? 'open' : 'closed',
      }));
      const a = toRows(first), b = toRows(later);
      const before = await write(a);
      await write(b);
      const range = { startNs: BigInt(from), endNs: BigInt(from + width) };
      const assets = assetIdx.map((i) => ASSETS[i]);
      const expect = (rows: Row[]) => rows
        .filter((r) => states.includes(r.state) && assets.includes(r.asset) && r.start < range.endNs && (r.end === null || r.end > range.startNs))
        .sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : x.id < y.id ? -1 : 1)).map((r) => r.id);
      const filter = { templateIds: [TEMPLATE], assetIds: assets, overlaps: range, states, attributes: [], tx: null };
      t.same(await all(filter, limit), expect([...a, ...b]), 'current');
      t.same(await all({ ...filter, tx: before }, limit), expect(a), 'as of the first transaction: the later episodes did not exist');
    },
  ), { numRuns: 20 });
});

t.test('the u grid: instants from start to end, ascending, rounded down; u from 0 to 1', async (t) => {
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 62n }), fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 1, max: 600 }), (start, span, points) => {
    const ts = gridInstants(start, start + span, points);
    const u = uValues(points);
    if (ts[0] !== start || u[0] !== 0) return false;
    if (points > 1 && (ts[points - 1] !== start + span || u[points - 1] !== 1)) return false;
    for (let i = 0; i < points; i++) {
      // the reference: start + floor(span * u_i) in exact arithmetic
      const want = points === 1 ? start : start + (span * BigInt(i)) / BigInt(points - 1);
      if (ts[i] !== want) return false;
      if (i > 0 && (ts[i] < ts[i - 1] || u[i] <= u[i - 1])) return false;
    }
    return true;
  }), { numRuns: 300 });
  t.pass('300 random grids hold');
});
