// What a disk-full run must show (failures) and where it falls short of the contract without
// breaking a guarantee (gaps, printed and tracked, not failed).
import type { DiskFullReport } from './disk-full.js';

/** Behaviour short of the contract that does not break a guarantee (printed, not failed). */
export function diskFullGaps(r: Exclude<DiskFullReport, { skipped: string }>): string[] {
  const out: string[] = [];
  for (const [phase, p] of [['below the threshold', r.belowThreshold], ['with no space at all', r.noSpaceAtAll]] as const) {
    if (p.modelWrite >= 500 && p.modelWrite !== 503) out.push(`${phase}: a model write is refused ${p.modelWrite} ${p.modelWriteCode ?? ''} where the contract's answer is 503 storage-full`);
  }
  return out;
}

export function diskFullFailures(r: Exclude<DiskFullReport, { skipped: string }>): string[] {
  const out: string[] = [];
  if (r.unexpectedExits > 0) out.push('the service exited by itself');
  if (r.msToFirstRefusal === null) out.push('ingest was never refused storage-full');
  if (r.rejected['storage-full'] === undefined) out.push('no storage-full rejection reached the collectors');
  for (const [phase, p] of [['below the threshold', r.belowThreshold], ['with no space at all', r.noSpaceAtAll]] as const) {
    if (!p.alive) out.push(`${phase}: not alive`);
    if (p.rawRead !== 200) out.push(`${phase}: raw read answered ${p.rawRead}`);
    if (p.modelRead !== 200) out.push(`${phase}: model read answered ${p.modelRead}`);
    if (p.modelWrite !== 200 && p.modelWrite < 500) out.push(`${phase}: model write answered ${p.modelWrite} (accepted or refused with 5xx expected)`);
  }
  if (r.msToResume === null) out.push('ingest did not resume after space returned');
  if (r.msToBuffersDrained === null) out.push('the collectors\' buffers did not drain');
  if (r.msToModelWrites === null) out.push('model writes did not resume');
  if (r.lost > 0) out.push(`${r.lost} acknowledged points lost`);
  if (r.duplicated > 0) out.push(`${r.duplicated} points stored twice`);
  if (r.corrupt > 0) out.push(`${r.corrupt} points stored not as sent`);
  if (!r.checksumsMatch) out.push('checksums differ');
  if (r.modelMissing.length > 0) out.push(`${r.modelMissing.length} acknowledged model writes missing`);
  return out;
}
