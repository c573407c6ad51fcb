// Two moves of a backfill's Operation record the catalogue does not offer yet: back to
// running when a previewed job (awaiting-commit) is committed, and to cancelled when
// running work stops on a cancel (the catalogue's cancel only requests it for running
// work). Both are single guarded updates of the operation row, in the catalogue's terms.
import type { Queryable } from '../../model/db.js';
import { nowNs } from '../../clock.js';

export async function operationResumed(q: Queryable, id: string, stage: string): Promise<void> {
  await q.query("UPDATE operation SET state = 'running', stage = $2, progress_completed = 0 WHERE id = $1 AND state = 'awaiting-commit'", [id, stage]);
}

export async function operationCancelled(q: Queryable, id: string): Promise<void> {
  await q.query(
    "UPDATE operation SET state = 'cancelled', completed_ns = $2, estimated_work_remaining = 0 WHERE id = $1 AND state IN ('queued', 'running', 'awaiting-commit')",
    [id, nowNs()]);
}
