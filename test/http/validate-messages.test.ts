// Every 400 from schema validation names the field, what was expected in a user's words and
// what was received, without validator wording (issue 32 item 18).
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { compileValidator, type Where } from '../../src/http/validate.js';
import { Int64, Int64Id, Uuid, Nullable } from '../../src/http/schemas/common.js';
import { ServiceError } from '../../src/errors.js';

const JARGON = /Expected (kind|union|required|string|integer|number)|Kind|'Int64'|must match|anyOf/;

function problems(schema: Parameters<typeof compileValidator>[0], value: unknown, where: Where = 'body'): Array<{ field: string; problem: string }> {
  try {
    compileValidator(schema).check(where, value);
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    t.equal(e.code, 'invalid-request');
    const errors = (e.details as { errors: Array<{ field: string; problem: string }> }).errors;
    t.equal(e.message, `${errors[0].field}: ${errors[0].problem}`, 'the message names the first field');
    for (const x of errors) t.notMatch(x.problem, JARGON, `no validator jargon: ${x.problem}`);
    return errors;
  }
  t.fail('expected a refusal');
  return [];
}

const Read = Type.Object({
  start_ns: Int64(),
  interval_ns: Type.Optional(Int64({ minimum: 1 })),
  resolution: Type.Optional(Type.Union([Type.Literal('1h'), Type.Literal('1d')])),
  asset: Type.Optional(Uuid()),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 8 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  tz: Type.Optional(Nullable(Type.String({ maxLength: 4 }))),
  scope: Type.Optional(Type.Union([
    Type.Object({ kind: Type.Literal('path'), path: Type.String() }, { additionalProperties: false }),
    Type.Object({ kind: Type.Literal('asset_id'), asset_id: Uuid() }, { additionalProperties: false }),
  ])),
}, { additionalProperties: false });

t.test('an int64 time says nanoseconds since the Unix epoch and what came', async (t) => {
  const [p] = problems(Read, { start_ns: 'yesterday' });
  t.same(p.field, 'body.start_ns');
  t.match(p.problem, /expected an integer of nanoseconds since the Unix epoch .*received "yesterday"/);
  const [over] = problems(Read, { start_ns: 9223372036854775808n });
  t.match(over.problem, /received 9223372036854775808, outside the int64 range/);
  const [dur] = problems(Read, { start_ns: 1, interval_ns: 0 });
  t.match(dur.problem, /expected an integer number of nanoseconds from 1 to 9223372036854775807, received 0/);
});

t.test('a missing field is required, with what it should be', async (t) => {
  const [p] = problems(Read, {});
  t.equal(p.field, 'body.start_ns');
  t.match(p.problem, /^required: expected an integer of nanoseconds since the Unix epoch .*received nothing$/);
});

t.test('choices list their allowed values', async (t) => {
  const [p] = problems(Read, { start_ns: 1, resolution: '1w' });
  t.equal(p.field, 'body.resolution');
  t.equal(p.problem, 'expected one of `1h`, `1d`, received "1w"');
});

t.test('a tagged union reports the tag choices or the named variant\'s own problem', async (t) => {
  const [tag] = problems(Read, { start_ns: 1, scope: { kind: 'template' } });
  t.equal(tag.field, 'body.scope.kind');
  t.equal(tag.problem, 'expected one of `path`, `asset_id`, received "template"');
  const [inner] = problems(Read, { start_ns: 1, scope: { kind: 'asset_id', asset_id: 'pump-1' } });
  t.equal(inner.field, 'body.scope.asset_id');
  t.match(inner.problem, /expected a UUID .*received "pump-1"/);
});

t.test('a nullable field reports the non-null variant', async (t) => {
  const [p] = problems(Read, { start_ns: 1, tz: 'Europe/Berlin' });
  t.equal(p.field, 'body.tz');
  t.match(p.problem, /expected a string of at most 4 characters, received "Europe\/Berlin" \(13 characters\)/);
});

t.test('ranges, lengths and unknown fields are said in words', async (t) => {
  t.match(problems(Read, { start_ns: 1, limit: 5000 })[0].problem, 'expected an integer from 1 to 1000, received 5000');
  t.match(problems(Read, { start_ns: 1, name: '' })[0].problem, 'expected a string of 1 to 8 characters, received ""');
  const [extra] = problems(Read, { start_ns: 1, strat_ns: 2 });
  t.equal(extra.field, 'body.strat_ns');
  t.match(extra.problem, /not a known field; the known fields are `start_ns`, `interval_ns`/);
});

t.test('an int64 id in a path is range-checked', async (t) => {
  const Params = Type.Object({ id: Int64Id() });
  const [p] = problems(Params, { id: '9223372036854775808' }, 'path');
  t.equal(p.field, 'path.id');
  t.match(p.problem, /expected a positive integer id of at most 9223372036854775807 \(digits\), received "9223372036854775808"/);
  compileValidator(Params).check('path', { id: '9223372036854775807' });
});

t.test('the contract declares the text policy and the request limits the server enforces', async (t) => {
  const { buildContract } = await import('../../src/http/openapi.js');
  const { allRoutes } = await import('../../src/http/routes/index.js');
  const { TEXT_ACCEPTED_PATTERN, assertAcceptedText } = await import('../../src/text-policy.js');
  const doc = buildContract(allRoutes(), { version: 'test' }) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  t.match(doc['x-text-policy'].description, /U\+0000/);
  t.same(Object.keys(doc['x-request-limits']).sort(), ['body_bytes', 'header_bytes', 'header_fields', 'json_depth', 'url_bytes']);
  const login = doc.paths['/v1/auth/login/local'].post.requestBody.content['application/json'].schema;
  const loginSchema = login.$ref ? doc.components.schemas[login.$ref.split('/').pop()] : login;
  t.equal(loginSchema.properties.password.pattern, TEXT_ACCEPTED_PATTERN, 'a free-text string a client sends carries the pattern');
  const asset = doc.paths['/v1/model/assets'].post.requestBody.content['application/json'].schema;
  const assetSchema = asset.$ref ? doc.components.schemas[asset.$ref.split('/').pop()] : asset;
  t.match(assetSchema.properties.name, { minLength: 1, maxLength: 200, pattern: /\/\|/ }, 'an asset name declares the length and characters the model enforces');
  const accepted = new RegExp(TEXT_ACCEPTED_PATTERN, 'u');
  for (const s of ['plain', 'tab\tnew\nline\r', 'ünï ✓ 𝄞', 'a\u0000b', 'bell\u0007', 'esc\u001b', 'del\u007f']) {
    let serverAccepts = true;
    try { assertAcceptedText('body', s); } catch { serverAccepts = false; }
    t.equal(accepted.test(s), serverAccepts, `the pattern and the server agree on ${JSON.stringify(s)}`);
  }
});

t.test('a missing tagged union names its tag and the choices', async (t) => {
  const Body = Type.Object({ scope: Type.Union([
    Type.Object({ kind: Type.Literal('path'), path: Type.String() }),
    Type.Object({ kind: Type.Literal('asset_id'), asset_id: Uuid() }),
  ]) });
  const [p] = problems(Body, {});
  t.equal(p.field, 'body.scope');
  t.equal(p.problem, 'required: expected an object whose `kind` is one of `path`, `asset_id`, received nothing');
});

t.test('a missing member whose schema accepts any JSON is named (fuzz case: POST /v1/model/attributes)', async (t) => {
  const { CreateAttributeBody } = await import('../../src/http/routes/model/schemas.js');
  // the fuzz's request, definition.entry_cadence left out
  const body = {
    asset_id: '18eff094-49ef-4ffa-8c9a-b0f37de615d0', attr_def_id: '00000000-0000-4000-a000-000000000001',
    definition: {
      name: 'Flow', quantity_kind_id: '00000015-fffb-4fff-8000-000c00000016', default_unit_id: null, continuity_class: 'stepped',
      writer_class: 'manual', enum_set_id: null, limit_traits: '{', lifecycle_policy: true, overridable: ['tank'],
    },
    overrides: { x: true }, reason: 'r',
  };
  const errors = problems(CreateAttributeBody, body);
  t.equal(errors[0]?.field, 'body.definition.entry_cadence');
  t.match(errors[0]?.problem, /^required: /);
});
