// The rule-cycle helper: a rule whose output feeds its own input, directly or through
// other rules, is found and spelled out in order; acyclic rule sets give null (property,
// against a topological sort).
import t from 'tap';
import fc from 'fast-check';
import { cycleError, findRuleCycle, type CycleStep, type RuleEdges } from '../../src/calc/expression/index.js';

const SEED = 20261127;
t.comment(`fast-check seed ${SEED} (replay a failure with the same seed and the printed path)`);

t.test('a rule reading its own output is a cycle of one step', async (t) => {
  t.same(findRuleCycle([{ ruleId: 'r1', outputKey: 'x', inputKeys: ['a', 'x'] }]), [{ ruleId: 'r1', outputKey: 'x', inputKey: 'x' }]);
});

t.test('a cycle through other rules is listed in order, each step reading what the next writes', async (t) => {
  const rules: RuleEdges[] = [
    { ruleId: 'feed', outputKey: 'a', inputKeys: ['raw'] },
    { ruleId: 'r1', outputKey: 'x', inputKeys: ['a', 'z'] },
    { ruleId: 'r2', outputKey: 'y', inputKeys: ['x'] },
    { ruleId: 'r3', outputKey: 'z', inputKeys: ['y', 'a'] },
  ];
  const cycle = findRuleCycle(rules);
  t.same(cycle, [
    { ruleId: 'r1', outputKey: 'x', inputKey: 'z' },
    { ruleId: 'r3', outputKey: 'z', inputKey: 'y' },
    { ruleId: 'r2', outputKey: 'y', inputKey: 'x' },
  ]);
  const e = cycleError(cycle!, 'expression');
  t.equal(e.code, 'calc-cycle');
  t.equal(e.status, 400);
  t.same(e.details?.cycle, [{ rule_id: 'r1', output: 'x', input: 'z' }, { rule_id: 'r3', output: 'z', input: 'y' }, { rule_id: 'r2', output: 'y', input: 'x' }]);
  t.match(e.message, /rule r1 reads z, written by rule r3; rule r3 reads y, written by rule r2; rule r2 reads x, written by rule r1/);
});

t.test('chains and diamonds are not cycles', async (t) => {
  t.equal(findRuleCycle([
    { ruleId: 'r1', outputKey: 'b', inputKeys: ['a'] },
    { ruleId: 'r2', outputKey: 'c', inputKeys: ['a'] },
    { ruleId: 'r3', outputKey: 'd', inputKeys: ['b', 'c'] },
    { ruleId: 'r4', outputKey: 'e', inputKeys: ['d', 'a', 'b'] },
  ]), null);
  t.equal(findRuleCycle([]), null);
});

function acyclic(rules: RuleEdges[]): boolean {
  // Kahn: repeatedly remove rules none of whose inputs is written by a remaining rule.
  let left = rules.map((_, i) => i);
  for (;;) {
    const outputs = new Set(left.map((i) => rules[i].outputKey));
    const next = left.filter((i) => rules[i].inputKeys.some((k) => outputs.has(k)));
    if (next.length === 0) return true;
    if (next.length === left.length) return false;
    left = next;
  }
}

function validCycle(rules: RuleEdges[], cycle: CycleStep[]): boolean {
  return cycle.length > 0 && cycle.every((step, i) => {
    const next = cycle[(i + 1) % cycle.length];
    const rule = rules.find((r) => r.ruleId === step.ruleId);
    return rule !== undefined && rule.outputKey === step.outputKey && rule.inputKeys.includes(step.inputKey) && next.outputKey === step.inputKey;
  });
}

t.test('a cycle is found exactly when the rules are not acyclic, and it is a real cycle (property)', async (t) => {
  const keys = fc.constantFrom('k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7');
  const rules = fc.array(fc.record({ outputKey: keys, inputKeys: fc.uniqueArray(keys, { maxLength: 3 }) }), { maxLength: 8 })
    .map((rs) => rs.map((r, i) => ({ ruleId: `r${i}`, ...r })));
  let cyclic = 0;
  fc.assert(fc.property(rules, (rs) => {
    const cycle = findRuleCycle(rs);
    if (cycle === null) return acyclic(rs);
    cyclic++;
    return !acyclic(rs) && validCycle(rs, cycle);
  }), { seed: SEED, numRuns: 2000 });
  t.ok(cyclic > 200 && cyclic < 1800, `both kinds of rule sets were generated (${cyclic} of 2000 cyclic)`);
});
