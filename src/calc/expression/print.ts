// Prints a syntax tree back as text that parses to the same tree (parentheses only where
// precedence needs them). Used in messages naming an operand, and by the round-trip property.
import type { ExprNode } from './ast.js';
import { DURATION_UNITS, KEYWORDS } from './lexer.js';

const PRECEDENCE: Record<string, number> = {
  or: 1, and: 2, '<': 4, '<=': 4, '>': 4, '>=': 4, '==': 4, '!=': 4, '+': 5, '-': 5, '*': 6, '/': 6, '%': 6, '^': 8,
};
// not: 3, unary minus: 7, primaries: 9, if: 0.
function precedenceOf(node: ExprNode): number {
  switch (node.kind) {
    case 'if': return 0;
    case 'binary': return PRECEDENCE[node.op];
    case 'unary': return node.op === 'not' ? 3 : 7;
    default: return 9;
  }
}

const SIMPLE_NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;
const SIMPLE_UNIT = /^[\p{L}°µ][\p{L}\p{N}°µ/·²³_]*$/u;

function printNumber(value: number): string {
  // Exponent form keeps the round trip exact for every double (String(1e21) is "1e+21").
  return String(value);
}

export function printExpression(node: ExprNode): string {
  const wrap = (child: ExprNode, min: number) => {
    const text = printExpression(child);
    return precedenceOf(child) < min ? `(${text})` : text;
  };
  switch (node.kind) {
    case 'number': {
      const numeral = printNumber(node.value);
      if (node.unit === null) return numeral;
      const simple = SIMPLE_UNIT.test(node.unit) && !KEYWORDS.has(node.unit) && !(node.unit in DURATION_UNITS);
      return simple ? `${numeral} ${node.unit}` : `${numeral} \`${node.unit}\``;
    }
    case 'duration': return node.text;
    case 'string': return `"${node.value.replaceAll('"', '""')}"`;
    case 'bool': return node.value ? 'true' : 'false';
    case 'reference':
      return SIMPLE_NAME.test(node.name) && !KEYWORDS.has(node.name) ? node.name : `'${node.name.replaceAll('\'', '\'\'')}'`;
    case 'call': return `${node.name}(${node.args.map((a) => printExpression(a)).join(', ')})`;
    case 'if':
      return `if ${printExpression(node.cond)} then ${printExpression(node.then)} else ${printExpression(node.else)}`;
    case 'unary':
      return node.op === 'not' ? `not ${wrap(node.operand, 3)}` : `-${wrap(node.operand, 7)}`;
    case 'binary': {
      const p = PRECEDENCE[node.op];
      if (node.op === '^') return `${wrap(node.left, 9)} ^ ${wrap(node.right, 7)}`;
      // Comparisons do not chain: both sides must bind tighter. Others are left-associative.
      const leftMin = p === 4 ? 5 : p;
      return `${wrap(node.left, leftMin)} ${node.op} ${wrap(node.right, p + 1)}`;
    }
  }
}
