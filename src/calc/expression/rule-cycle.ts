// Cycles across calculation rules: a rule whose output feeds its own input, directly or
// through other rules, would recompute forever. Rules form a graph (rule → the rules
// writing its inputs); an iterative DFS with colours finds a back edge and the path on the
// stack between its ends is the cycle, reported in the order data flows backwards
// (each step reads what the next step writes).
import { ServiceError } from '../../errors.js';
import type { CycleStep, RuleEdges } from './types.js';

/** A cycle as an ordered list of steps, or null when the rules form none. */
export function findRuleCycle(rules: readonly RuleEdges[]): CycleStep[] | null {
  const writers = new Map<string, number[]>();
  rules.forEach((r, i) => {
    const list = writers.get(r.outputKey);
    if (list) list.push(i); else writers.set(r.outputKey, [i]);
  });
  // Edge list per rule: [input key, rule writing it].
  const edges: Array<Array<[string, number]>> = rules.map((r) => {
    const out: Array<[string, number]> = [];
    for (const key of r.inputKeys) for (const w of writers.get(key) ?? []) out.push([key, w]);
    return out;
  });
  const WHITE = 0, GREY = 1, BLACK = 2;
  const colour = new Uint8Array(rules.length);
  for (let root = 0; root < rules.length; root++) {
    if (colour[root] !== WHITE) continue;
    const stack: Array<{ rule: number; edge: number; via: string }> = [{ rule: root, edge: 0, via: '' }];
    colour[root] = GREY;
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const list = edges[top.rule];
      if (top.edge >= list.length) {
        colour[top.rule] = BLACK;
        stack.pop();
        continue;
      }
      const [key, next] = list[top.edge++];
      top.via = key;
      if (colour[next] === GREY) {
        const from = stack.findIndex((f) => f.rule === next);
        return stack.slice(from).map((f) => ({ ruleId: rules[f.rule].ruleId, outputKey: rules[f.rule].outputKey, inputKey: f.via }));
      }
      if (colour[next] === WHITE) {
        colour[next] = GREY;
        stack.push({ rule: next, edge: 0, via: '' });
      }
    }
  }
  return null;
}

/** The 400 for a cycle, spelled out: "rule A reads x, written by rule B, which reads y, written by rule A". */
export function cycleError(cycle: readonly CycleStep[], field = 'expression'): ServiceError {
  const text = cycle.map((s, i) => `rule ${s.ruleId} reads ${s.inputKey}, written by rule ${cycle[(i + 1) % cycle.length].ruleId}`).join('; ');
  return new ServiceError('calc-cycle', `the rules form a cycle: ${text}`, {
    field,
    cycle: cycle.map((s) => ({ rule_id: s.ruleId, output: s.outputKey, input: s.inputKey })),
  });
}
