import { Type } from '@sinclair/typebox';
import { Int64, Nullable, AnyJson, Limit } from '../../schemas/common.js';

export const ModelJob = Type.Object({
  job_id: Int64(),
  kind: Type.String(),
  state: Type.String({ description: 'preview, then committed' }),
  params: AnyJson(),
  preview: AnyJson({ description: 'bulk-bind: {from_ns, bindings: [{series_id, source_name, attribute_id, asset_id, path}], skipped: [{series_id, source_name, reason}]}' }),
  created_ns: Int64(),
  committed_ns: Nullable(Int64()),
  principal: Type.String(),
  error: Nullable(Type.String()),
}, { $id: 'ModelJob', additionalProperties: false });

export const CreateJobBody = Type.Object({
  kind: Type.String({ minLength: 1, maxLength: 100, description: 'bulk-bind' }),
  params: Type.Optional(AnyJson({ description: 'bulk-bind: {pattern: "prefix{asset}sep{attribute}suffix", under?: asset path, from_ns?: int64}' })),
}, { additionalProperties: false });

export const JobParams = Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,18}$', description: 'job_id' }) }, { additionalProperties: false });

export const ListJobsQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  limit: Type.Optional(Limit(1000)),
}, { additionalProperties: false });

export const JobPage = Type.Object({ items: Type.Array(ModelJob), next_cursor: Nullable(Type.String()) }, { additionalProperties: false });
