// Model jobs: created in `preview` with a server-computed preview; a commit recomputes
// the preview inside the model transaction that applies it (under a lock that
// serialises job commits) and applies it only when it is identical to the stored one,
// so a commit does exactly what was previewed or refuses with 409 conflict.
import { jsonbParam, type Db } from '../db.js';
import { modelTransaction, type Who } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { nowNs } from '../../clock.js';
import { AssetTree } from '../assets/asset-tree.js';
import { canonicalJson } from '../../json/canonical-json.js';
import type { Queryable } from '../db.js';
import type { EventSink } from '../tx-log.js';
import { checkBulkBindParams, previewBulkBind, applyBulkBind, type BulkBindPreview } from './bulk-bind.js';
import { checkBulkInstantiateParams, previewBulkInstantiate, applyBulkInstantiate, type BulkInstantiatePreview } from './bulk-instantiate.js';
import { checkTemplatePropagateParams, previewTemplatePropagate, applyTemplatePropagate, type TemplatePropagatePreview } from './template-propagate.js';
import { newIdSeed, storedIdSeed } from './planned-ids.js';

/** One kind of model job: its params check, its preview (pure reads) and how a preview is applied. */
interface JobKind {
  check(params: unknown): unknown;
  /** stored: null at create (kinds that plan ids draw a seed), else the stored preview, whose seed a commit reuses. */
  preview(q: Queryable, tree: AssetTree, params: unknown, stored: unknown): Promise<unknown>;
  apply(q: Queryable, txId: bigint, events: EventSink, preview: unknown): Promise<void>;
}

const seedFor = (stored: unknown) => (stored === null ? newIdSeed() : storedIdSeed(stored));

const KINDS: Record<string, JobKind> = {
  'bulk-bind': {
    check: checkBulkBindParams,
    preview: (q, tree, p) => previewBulkBind(q, tree, p as ReturnType<typeof checkBulkBindParams>),
    apply: (q, txId, events, v) => applyBulkBind(q, txId, events, v as BulkBindPreview),
  },
  'bulk-instantiate': {
    check: checkBulkInstantiateParams,
    preview: (q, tree, p, stored) => previewBulkInstantiate(q, tree, p as ReturnType<typeof checkBulkInstantiateParams>, seedFor(stored)),
    apply: (q, txId, events, v) => applyBulkInstantiate(q, txId, events, v as BulkInstantiatePreview),
  },
  'template-propagate': {
    check: checkTemplatePropagateParams,
    preview: (q, tree, p, stored) => previewTemplatePropagate(q, tree, p as ReturnType<typeof checkTemplatePropagateParams>, seedFor(stored)),
    apply: (q, txId, events, v) => applyTemplatePropagate(q, txId, events, v as TemplatePropagatePreview),
  },
};

export const JOB_KINDS = Object.keys(KINDS);
const JOB_LOCK = 73_042_052;

export interface ModelJob {
  job_id: bigint; kind: string; state: string; params: unknown; preview: unknown;
  created_ns: bigint; committed_ns: bigint | null; principal: string; error: string | null;
}

interface Row { job_id: bigint; kind: string; state: string; params: unknown; preview: unknown; preview_tx: bigint; created_ns: bigint; committed_ns: bigint | null; principal: string; error: string | null }

const toJob = (r: Row): ModelJob => ({
  job_id: BigInt(r.job_id), kind: r.kind, state: r.state, params: r.params, preview: r.preview,
  created_ns: BigInt(r.created_ns), committed_ns: r.committed_ns === null ? null : BigInt(r.committed_ns), principal: r.principal, error: r.error,
});

const currentTx = async (db: { query: Db['query'] }) => (await db.query<{ tx: bigint | null }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0]?.tx ?? 0n;

export async function createJob(db: Db, principal: string, kind: string, params: unknown): Promise<ModelJob> {
  const k = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
  if (!k) throw new ServiceError('invalid-request', `kind: unsupported job kind "${kind}" (supported: ${JOB_KINDS.join(', ')})`, { errors: [{ field: 'kind', problem: 'unsupported job kind' }] });
  const p = k.check(params ?? {});
  // One read transaction so the preview and its preview_tx describe the same model state.
  const { preview, tx } = await db.transaction(async (q) => {
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const tree = await AssetTree.load(q, null);
    return { preview: await k.preview(q, tree, p, null), tx: await currentTx(q) };
  });
  const { rows } = await db.query<Row>(
    `INSERT INTO model_job (kind, state, params, preview, preview_tx, created_ns, principal) VALUES ($1, 'preview', $2::jsonb, $3::jsonb, $4, $5, $6) RETURNING *`,
    [kind, jsonbParam(p), jsonbParam(preview), tx, nowNs(), principal]);
  return toJob(rows[0]);
}

export async function getJob(db: Db, id: bigint): Promise<ModelJob | null> {
  const { rows } = await db.query<Row>('SELECT * FROM model_job WHERE job_id = $1', [id]);
  return rows[0] ? toJob(rows[0]) : null;
}

export async function listJobs(db: Db, f: { principal?: string; after?: bigint; limit: number }): Promise<{ items: ModelJob[]; more: boolean }> {
  const { rows } = await db.query<Row>(
    `SELECT * FROM model_job WHERE job_id > $1 AND ($2::text IS NULL OR principal = $2) ORDER BY job_id LIMIT $3`,
    [f.after ?? 0n, f.principal ?? null, f.limit + 1]);
  return { items: rows.slice(0, f.limit).map(toJob), more: rows.length > f.limit };
}

export async function commitJob(db: Db, who: Who, id: bigint): Promise<ModelJob> {
  const c = await modelTransaction(db, who, async (q, txId, events) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [JOB_LOCK]);
    const { rows } = await q.query<Row>('SELECT * FROM model_job WHERE job_id = $1 FOR UPDATE', [id]);
    const job = rows[0];
    if (!job) throw new ServiceError('not-found', `model job ${id} not found`);
    if (job.state !== 'preview') throw new ServiceError('conflict', `model job ${id} is ${job.state}`, { state: job.state });
    const k = KINDS[job.kind];
    if (!k) throw new Error(`BUG: stored model job ${id} has unknown kind ${job.kind}`);
    const tree = await AssetTree.load(q, null);
    const again = await k.preview(q, tree, k.check(job.params), job.preview);
    if (canonicalJson(again) !== canonicalJson(job.preview)) {
      const { rows: cur } = await q.query<{ tx: bigint | null }>('SELECT max(tx_id) AS tx FROM model_tx WHERE tx_id < $1', [txId]);
      throw new ServiceError('conflict', `model job ${id}: the model changed since the preview (computed at tx ${job.preview_tx}); create a new job`, {
        preview_tx: String(job.preview_tx), current_tx: String(cur[0]?.tx ?? 0n),
      });
    }
    await k.apply(q, txId, events, job.preview);
    const { rows: done } = await q.query<Row>(
      `UPDATE model_job SET state = 'committed', committed_ns = (SELECT committed_ns FROM model_tx WHERE tx_id = $2), committed_tx = $2 WHERE job_id = $1 RETURNING *`, [id, txId]);
    return done[0];
  });
  return toJob(c.result);
}
