// Capture rules of template attributes ("Outputs at Close" in PI's words): a statistic over
// the episode of the resolved attribute of the asset in a role, written
//   <statistic>(<role>|<attribute name>)      e.g. twa(reactor|Temperature)
// with the path notation the model uses elsewhere ("|" before an attribute name).
// at-open: the value at the episode's start; at-close: the value at its end; min, max,
// avg (mean of the stored points) and twa (time-weighted average) over [start, end).
import { invalid } from '../errors.js';

export const CAPTURE_STATISTICS = ['at-open', 'at-close', 'min', 'max', 'avg', 'twa'] as const;
export type CaptureStatistic = (typeof CAPTURE_STATISTICS)[number];

export interface CaptureRule {
  /** The rule as written, normalised (no blanks around the parts). */
  text: string;
  statistic: CaptureStatistic;
  role: string;
  attribute: string;
}

const RULE = /^\s*([a-z-]+)\s*\(\s*([^|()]+?)\s*\|\s*([^|()]+?)\s*\)\s*$/;

export function parseCapture(field: string, text: string): CaptureRule {
  const m = RULE.exec(text);
  if (!m) throw invalid(field, 'a capture is <statistic>(<role>|<attribute>), e.g. twa(reactor|Temperature)');
  const statistic = m[1] as CaptureStatistic;
  if (!CAPTURE_STATISTICS.includes(statistic)) throw invalid(field, `unknown statistic "${m[1]}": use ${CAPTURE_STATISTICS.join(', ')}`);
  return { text: `${statistic}(${m[2]}|${m[3]})`, statistic, role: m[2], attribute: m[3] };
}
