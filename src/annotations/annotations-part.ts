// Starts the annotation attachment store (<data dir>/attachments) and the annotations
// lifecycle work beside the rest of the service; returns the closer that stops it.
import type { ServiceContext } from '../service-context.js';
import { AttachmentStore } from './attachment-store.js';
import { enforceAnnotationLifecycle, LIFECYCLE_PRINCIPAL } from './annotations-lifecycle.js';
import { nowNs } from '../clock.js';

export interface AnnotationsPart {
  attachments: AttachmentStore;
  /** One enforcement run now (the background job's work); returns the Operation id. */
  enforceLifecycle(atNs?: bigint): Promise<string>;
}

declare module '../service-context.js' {
  interface ServiceParts {
    annotations: AnnotationsPart;
  }
}

/** Retention is counted in days: hourly is precise enough, as for the series lifecycle. */
const LIFECYCLE_INTERVAL_MS = 60 * 60_000;

export async function startAnnotationsPart(context: ServiceContext): Promise<() => Promise<void>> {
  const attachments = await AttachmentStore.open(context.config.dataDir);
  const enforceLifecycle = async (atNs: bigint = nowNs()): Promise<string> => {
    const op = await context.operations.start({
      namespace: 'job', kind: 'annotations.lifecycle-enforcement', principal: LIFECYCLE_PRINCIPAL,
      reason: 'scheduled annotations lifecycle enforcement', detail: { adapter: 'annotations-lifecycle' }, unit: 'attributes',
    });
    try {
      const r = await enforceAnnotationLifecycle(context.db, context.parts.storage, atNs);
      for (const sha of r.unusedSha256) await attachments.remove(sha);
      await context.operations.progress(op.id, { completed: BigInt(r.attributesWithCutoff), total: BigInt(r.attributesWithCutoff) });
      await context.operations.complete(op.id, {
        adapter: 'annotations-lifecycle',
        value: { now_ns: atNs.toString(), attributes_with_cutoff: r.attributesWithCutoff, targets_removed: r.targetsRemoved, annotations_deleted: r.annotationsDeleted, attachments_removed: r.unusedSha256.length },
      });
      return op.id;
    } catch (e) {
      await context.operations.fail(op.id, { message: (e as Error)?.message ?? String(e) });
      throw e;
    }
  };
  context.parts.annotations = { attachments, enforceLifecycle };
  context.parts.jobs.register({
    name: 'annotations-lifecycle',
    kind: 'lifecycle',
    intervalMs: LIFECYCLE_INTERVAL_MS,
    run: async () => {
      const id = await enforceLifecycle();
      return { summary: 'annotations older than their series\' annotations keep removed', operationId: id };
    },
  });
  // the job runner belongs to the series part, which stops it
  return async () => undefined;
}
