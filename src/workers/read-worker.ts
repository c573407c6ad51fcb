// The read worker's entry: Piscina calls the export named by the task (one file per
// task under tasks/). The series env opens on the first task (worker-state.ts).
import { READ_WORKER_NICE, lowerThreadPriority } from '../threads/thread-priority.js';

lowerThreadPriority(READ_WORKER_NICE);

export { rawTask as raw } from './tasks/raw-task.js';
export { rollupsTask as rollups } from './tasks/rollups-task.js';
export { gapsTask as gaps } from './tasks/gaps-task.js';
export { auditTask as audit } from './tasks/audit-task.js';
export { decodeTask as decode } from './tasks/decode-task.js';
export { renderTask as render } from './tasks/render-task.js';
export { readSnapshotTask as readSnapshot } from './tasks/read-snapshot-task.js';
export { readRawTask as readRaw } from './tasks/read-raw-task.js';
export { readAtTask as readAt } from './tasks/read-at-task.js';
export { readOverlayTask as readOverlay } from './tasks/read-overlay-task.js';
export { readAsOfTask as readAsOf } from './tasks/read-as-of-task.js';
export { readAuditTask as readAudit } from './tasks/read-audit-task.js';
export { readSummaryTask as readSummary } from './tasks/read-summary-task.js';
export { readRenderTask as readRender } from './tasks/read-render-task.js';
export { calcWindowsTask as calcWindows } from './tasks/calc-windows-task.js';
