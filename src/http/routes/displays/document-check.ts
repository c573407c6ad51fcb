// Checks of a DisplayDocument beyond its schema: a trend's bindings (or any bindings that
// say kind "trend") must be the spec's trend bindings. Widget bindings are any JSON in the
// schema so that other kinds keep their own shapes; this check names the exact field.
import { ServiceError } from '../../../errors.js';
import { compileValidator } from '../../validate.js';
import { isObject, type DisplayDocument } from '../../../displays/display-document.js';
import { TrendBindings } from './schemas.js';

const trendBindings = compileValidator(TrendBindings);

/** Throws 400 naming `<at>.widgets.<i>.bindings...` for trend bindings that do not match. */
export function checkDocument(doc: DisplayDocument, at: string): void {
  const widgets = doc.widgets ?? [];
  for (let i = 0; i < widgets.length; i++) {
    const b = widgets[i].bindings;
    if (b === undefined || !(widgets[i].type === 'trend' || (isObject(b) && b.kind === 'trend'))) continue;
    try {
      trendBindings.check('body', b);
    } catch (e) {
      if (!(e instanceof ServiceError) || e.code !== 'invalid-request') throw e;
      const prefix = `${at}.widgets.${i}.bindings`;
      const errors = ((e.details?.errors ?? []) as Array<{ field: string; problem: string }>).map((p) => ({ field: prefix + p.field.slice('body'.length), problem: p.problem }));
      const first = errors[0] ?? { field: prefix, problem: 'not trend bindings {kind: "trend", traces: [...]}' };
      throw new ServiceError('invalid-request', `${first.field}: ${first.problem}`, { errors });
    }
  }
}
