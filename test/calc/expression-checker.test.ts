// The checker: references, types, units and quantity kinds under each unit_check, the
// output attribute's kind, and what a checked expression says about its inputs and history.
import t from 'tap';
import { isServiceError, type ServiceError } from '../../src/errors.js';
import { checkExpression, compileExpression, type CheckOptions } from '../../src/calc/expression/index.js';
import { FLOW, PRESSURE, UNITS, floats, gridAt, outputOf, scope } from './expression-fixture.js';

const strict: CheckOptions = { unitCheck: 'strict' };

function refusal(text: string, options: CheckOptions = strict): ServiceError {
  try {
    checkExpression(text, scope, options);
  } catch (e) {
    if (isServiceError(e)) return e;
    throw e;
  }
  throw new Error(`accepted: ${text}`);
}

t.test('strict refuses adding a pressure to a flow, naming both operands and their quantity kinds', async (t) => {
  const e = refusal("'Discharge Pressure' + Flow");
  t.equal(e.code, 'unit-mismatch');
  t.equal(e.status, 400);
  t.same(e.details?.left, { text: "'Discharge Pressure'", quantity_kind: 'Pressure' });
  t.same(e.details?.right, { text: 'Flow', quantity_kind: 'Volume flow rate' });
  t.same(e.details?.position, { offset: 0, line: 1, column: 1 });
  t.match(e.message, /cannot add 'Discharge Pressure' \(Pressure\) and Flow \(Volume flow rate\)/);
  t.equal(refusal('Flow > 5 bar').code, 'unit-mismatch', 'comparisons too');
  t.equal(refusal("max(Flow, 'Discharge Pressure')").code, 'unit-mismatch', 'min/max too');
  t.equal(refusal("if Running then Flow else 'Discharge Pressure'").code, 'unit-mismatch', 'if branches too');
  t.equal(refusal("clamp(Flow, 0, 3 bar)").code, 'unit-mismatch', 'clamp too');
  const nested = refusal('a + (Flow - 1 bar)', { unitCheck: 'strict', field: 'trigger.expr' });
  t.same(nested.details?.position, { offset: 5, line: 1, column: 6 }, 'the position is the offending operation');
  t.equal(nested.details?.field, 'trigger.expr');
});

t.test('strict checks the result against the output attribute\'s quantity kind', async (t) => {
  const e = refusal('Flow * 2', { unitCheck: 'strict', output: outputOf('OUT', PRESSURE, UNITS.bar) });
  t.equal(e.code, 'unit-mismatch');
  t.same(e.details?.left, { text: 'Flow * 2', quantity_kind: 'Volume flow rate' });
  t.same(e.details?.right, { text: 'output OUT', quantity_kind: 'Pressure' });
  t.doesNotThrow(() => checkExpression('Flow * 2', scope, { unitCheck: 'strict', output: outputOf('OUT', FLOW, UNITS['L/s']) }));
  t.doesNotThrow(() => checkExpression('Flow * Flow', scope, { unitCheck: 'strict', output: outputOf('OUT', PRESSURE, UNITS.bar) }),
    'a product has a derived kind, which is not checked');
  t.doesNotThrow(() => checkExpression('Flow * 2', scope, { unitCheck: 'convert', output: outputOf('OUT', PRESSURE, UNITS.bar) }), 'convert does not refuse');
});

t.test('units of one kind are converted exactly: constants, operands and the result', async (t) => {
  const run = (text: string, options: CheckOptions, columns: ReturnType<typeof floats>[]) =>
    compileExpression(checkExpression(text, scope, options)).evaluate(columns, gridAt([0])).values[0];
  // 2 bar + 14.503773773 psi (1 bar) = 3 bar
  t.ok(Math.abs(run("'Discharge Pressure' + 14.503773773020923 psi", strict, [floats([[0, 2]])]) - 3) < 1e-9);
  // bar − kPa: the right operand is converted to the left's unit.
  t.ok(Math.abs(run("'Discharge Pressure' - 'Suction Pressure'", strict, [floats([[0, 2]]), floats([[0, 50]])]) - 1.5) < 1e-12);
  // A result in m³/h written to an L/s output: 36 m³/h = 10 L/s.
  t.ok(Math.abs(run('Flow', { unitCheck: 'strict', output: outputOf('OUT', FLOW, UNITS['L/s']) }, [floats([[0, 36]])]) - 10) < 1e-12);
  // Offsets: 20 °C compared with 293.15 K.
  t.equal(run('Temperature == 293.15 K', strict, [floats([[0, 20]])]), 1);
  // Plain digits find superscript units: 3.6 m3/h.
  t.ok(Math.abs(run('Flow + 3.6 m3/h', strict, [floats([[0, 1]])]) - 4.6) < 1e-12);
  // A ratio of one kind is dimensionless, in consistent units: 36 m³/h / 10 L/s = 1.
  t.ok(Math.abs(run("Flow / '..|Flow'", strict, [floats([[0, 36]]), floats([[0, 10]])]) - 1) < 1e-12);
  // off: stored numbers as they are, constants' units ignored.
  t.equal(run("'Discharge Pressure' + 1 psi", { unitCheck: 'off' }, [floats([[0, 2]])]), 3);
  t.equal(run("'Discharge Pressure' + Flow", { unitCheck: 'off' }, [floats([[0, 2]]), floats([[0, 3]])]), 5, 'off refuses nothing');
  t.equal(run("'Discharge Pressure' + Flow", { unitCheck: 'convert' }, [floats([[0, 2]]), floats([[0, 3]])]), 5, 'convert does not refuse different kinds');
});

t.test('an unknown reference, unit, function or enum member is named with its position', async (t) => {
  const attr = refusal("a + 'Pump 9|Flow'");
  t.equal(attr.code, 'unknown-reference');
  t.same(attr.details, { field: 'expression', reference: 'Pump 9|Flow', position: { offset: 4, line: 1, column: 5 } });
  t.equal(refusal('5 furlong + a').details?.reference, 'furlong');
  t.equal(refusal('median(a, b)').details?.reference, 'median');
  const member = refusal('State == "Exploded"');
  t.equal(member.code, 'unknown-reference');
  t.equal(member.details?.reference, 'Exploded');
});

t.test('types are checked: arithmetic on numbers, logic on bools, enums and strings only compared', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['Running + 1', /expected number, found bool/],
    ['a and Running', /expected bool, found number/],
    ['not a', /expected bool/],
    ['State + 1', /expected number, found enum/],
    ['State == 1', /an enum member name/],
    ["State == 'Other State'", /enum set PumpState/],
    ['Mode > "x"', /expected number, found string/],
    ['Mode', /a number or a bool result/],
    ['State', /a number or a bool result/],
    ['if a then 1 else 2', /expected bool/],
    ['if Running then 1 else true', /a number like the then branch/],
    ['avg(a, 5)', /a duration/],
    ['avg(a)', /2 arguments/],
    ['abs(a, b)', /1 argument/],
    ['prev(5)', /reads an attribute/],
    ['time_since(a)', /expected bool/],
    ['5m + a', /durations are only the window argument/],
  ];
  for (const [text, message] of cases) {
    const e = refusal(text);
    t.equal(e.code, 'type-mismatch', text);
    t.match(e.message, message, text);
    t.ok((e.details?.position as { offset: number }).offset >= 0, `${text}: has a position`);
  }
  t.equal(refusal('a > 1', { unitCheck: 'strict', expect: 'number' }).code, 'type-mismatch', 'expect: number');
  t.equal(refusal('a + 1', { unitCheck: 'strict', expect: 'bool' }).code, 'type-mismatch', 'expect: bool (a condition)');
  t.equal(refusal('a > 1', { unitCheck: 'strict', output: outputOf('OUT', null, null, 'string') }).code, 'type-mismatch', 'string outputs are not written');
  t.equal(refusal('a + 1', { unitCheck: 'strict', output: outputOf('OUT', null, null, 'bool') }).code, 'type-mismatch', 'a bool output needs a bool');
  t.doesNotThrow(() => checkExpression('State == "Running" and Mode != "auto" and Mode == \'Mode 2\'', scope, strict));
});

t.test('a checked expression lists its inputs once each, in order, with the history it needs', async (t) => {
  const c = checkExpression("b * a + b - 'Discharge Pressure' * 0 + avg(c, 5m) + prev(delta(d))", scope, { unitCheck: 'off' });
  t.same(c.inputs.map((i) => i.key), ['B', 'A', 'DP', 'C', 'D']);
  t.equal(c.lookbackNs, 300_000_000_000n);
  t.equal(c.lookbackPoints, 3, 'prev of delta needs the point in force and two before it');
  t.equal(c.resultType, 'number');
  const w = checkExpression('time_since(a > 1, 7d) > 60 or integral(b, 1h) > 5', scope, strict);
  t.equal(w.lookbackNs, 7n * 86_400_000_000_000n);
  t.equal(w.resultType, 'bool');
  t.equal(checkExpression('a + 1', scope, strict).lookbackPoints, 1, 'stepped alignment needs the value in force');
  t.same(checkExpression("Flow * 2", scope, strict).quantityKind, FLOW);
  t.equal(checkExpression("Flow * Flow", scope, strict).quantityKind, null, 'derived kinds are not named');
});
