import { Type } from '@sinclair/typebox';
import { Uuid, Nullable } from '../../schemas/common.js';
import { LINT_CODES } from '../../../model/lints/model-lints.js';

export const LintSeverity = Type.Union([Type.Literal('error'), Type.Literal('warning'), Type.Literal('info')]);
export const LintCodeSchema = Type.Union(Object.keys(LINT_CODES).map((c) => Type.Literal(c)));

export const ModelLint = Type.Object({
  code: Type.String({ description: Object.entries(LINT_CODES).map(([c, v]) => `${c} (${v.severity}): ${v.meaning}`).join(' ') }),
  severity: LintSeverity,
  resource: Type.Object({
    kind: Type.String({ description: 'attribute, binding, template or registry-entry' }),
    id: Uuid(),
    path: Nullable(Type.String({ description: 'attribute and binding lints: "<asset path>|<attribute name>"' })),
    asset_id: Type.Optional(Uuid()),
  }, { additionalProperties: false }),
  message: Type.String(),
}, { $id: 'ModelLint', additionalProperties: false });

export const LintsResponse = Type.Object({ items: Type.Array(ModelLint) }, { additionalProperties: false });

export const LintsQuery = Type.Object({
  code: Type.Optional(LintCodeSchema),
  severity: Type.Optional(LintSeverity),
}, { additionalProperties: false });
