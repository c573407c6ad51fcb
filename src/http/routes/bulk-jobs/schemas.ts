import { Type } from '@sinclair/typebox';
import { Int64, Int64Id, Nullable, AnyJson, Limit } from '../../schemas/common.js';

export const ModelJob = Type.Object({
  job_id: Int64(),
  kind: Type.String(),
  state: Type.String({ description: 'preview, then committed' }),
  params: AnyJson(),
  preview: AnyJson({ description: 'bulk-bind: {from_ns, bindings: [{series_id, source_name, attribute_id, asset_id, path}], skipped: [{series_id, source_name, reason}]}. '
    + 'bulk-instantiate: {id_seed, template_id, template_version, assets: [{asset_id, parent_id, path, name, attributes: [{attribute_id, attr_def_id, name}]}], skipped: [{index, parent, name, reason}]}. '
    + 'template-propagate: {id_seed, template_id, template_version, assets: [{asset_id, path, add: [{attribute_id, attr_def_id, name}], retire: [...]}], unchanged_assets, overrides_kept: [{attribute_id, path, fields}], skipped: [{asset_id, path, attr_def_id, name, reason}]}. '
    + 'Ids in a preview are the ids the commit creates.' }),
  created_ns: Int64(),
  committed_ns: Nullable(Int64()),
  principal: Type.String(),
  error: Nullable(Type.String()),
}, { $id: 'ModelJob', additionalProperties: false });

export const CreateJobBody = Type.Object({
  kind: Type.String({ minLength: 1, maxLength: 100, description: 'bulk-bind, bulk-instantiate or template-propagate' }),
  params: Type.Optional(AnyJson({ description: 'bulk-bind: {pattern: "prefix{asset}sep{attribute}suffix", under?: asset path, from_ns?: int64}; '
    + 'bulk-instantiate: {template_id, assets: [{parent: asset path, uuid or null, name}]} (at most 5000); template-propagate: {template_id, under?: asset path}' })),
}, { additionalProperties: false });

export const JobParams = Type.Object({ id: Int64Id({ description: 'job_id' }) }, { additionalProperties: false });

export const ListJobsQuery = Type.Object({
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  limit: Type.Optional(Limit(1000)),
}, { additionalProperties: false });

export const JobPage = Type.Object({ items: Type.Array(ModelJob), next_cursor: Nullable(Type.String()) }, { additionalProperties: false });
