// Compiled TypeBox validators, built once per route at start. A failed check becomes a
// ServiceError('invalid-request') listing each offending field and what was wrong.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ServiceError } from '../errors.js';

export interface Validator {
  check(where: 'path' | 'query' | 'body', value: unknown): void;
}

const MAX_REPORTED = 20;

export function compileValidator(schema: TSchema): Validator {
  const compiled: TypeCheck<TSchema> = TypeCompiler.Compile(schema);
  return {
    check(where, value) {
      if (compiled.Check(value)) return;
      const errors: Array<{ field: string; problem: string }> = [];
      for (const e of compiled.Errors(value)) {
        const field = `${where}${e.path.replaceAll('/', '.')}` || where;
        // A union failure repeats per member; keep the first message per field.
        if (!errors.some((x) => x.field === field)) errors.push({ field, problem: e.message });
        if (errors.length >= MAX_REPORTED) break;
      }
      const first = errors[0] ?? { field: where, problem: 'invalid' };
      throw new ServiceError('invalid-request', `${first.field}: ${first.problem}`, { errors });
    },
  };
}
