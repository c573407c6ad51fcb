// The syntax tree of an expression, as the parser builds it. Every node keeps the span of
// text it came from ([start, end) offsets), so each later error can point at it.

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '^' | '<' | '<=' | '>' | '>=' | '==' | '!=' | 'and' | 'or';
export type UnaryOp = '-' | 'not';

interface Span { start: number; end: number }

export type ExprNode =
  | (Span & { kind: 'number'; value: number; /** Unit symbol written after the number, or null. */ unit: string | null })
  | (Span & { kind: 'duration'; /** ns */ ns: number; text: string })
  | (Span & { kind: 'string'; value: string })
  | (Span & { kind: 'bool'; value: boolean })
  | (Span & { kind: 'reference'; name: string; quoted: boolean })
  | (Span & { kind: 'unary'; op: UnaryOp; operand: ExprNode })
  | (Span & { kind: 'binary'; op: BinaryOp; left: ExprNode; right: ExprNode })
  | (Span & { kind: 'if'; cond: ExprNode; then: ExprNode; else: ExprNode })
  | (Span & { kind: 'call'; name: string; args: ExprNode[] });

/** A position in the text as users count it: lines and columns from 1. */
export interface TextPosition { offset: number; line: number; column: number }

export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) { line++; lineStart = i + 1; }
  }
  return { offset, line, column: offset - lineStart + 1 };
}
