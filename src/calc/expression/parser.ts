// Recursive descent over the tokens. Precedence, loosest first:
//   if c then a else b  (the conditional; its else branch extends as far as it can)
//   or, and, not, comparisons (< <= > >= == !=, which do not chain), + -, * / %,
//   unary -, ^ (right-associative, tighter than unary minus: -2^2 is -4).
// A syntax error names the position and what could have come there.
import { positionOf, type BinaryOp, type ExprNode } from './ast.js';
import { expressionError, tokenize, type Token } from './lexer.js';

/** Nesting deeper than this is refused instead of exhausting the stack. */
export const EXPRESSION_MAX_DEPTH = 100;

const COMPARISONS = new Set(['<', '<=', '>', '>=', '==', '!=']);

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly text: string, private readonly field: string, private readonly tokens: Token[]) {}

  private peek(): Token { return this.tokens[this.i]; }
  private next(): Token { return this.tokens[this.i++]; }
  private isOp(op: string): boolean { const t = this.peek(); return t.kind === 'op' && t.text === op; }
  private isKeyword(word: string): boolean { const t = this.peek(); return t.kind === 'keyword' && t.text === word; }

  private fail(expected: string[]): never {
    const t = this.peek();
    const found = t.kind === 'eof' ? 'the end of the expression'
      : t.kind === 'string' ? 'a string' : t.kind === 'quoted' ? `the reference '${t.text}'` : JSON.stringify(this.text.slice(t.start, t.end));
    throw expressionError(this.text, this.field, t.start, expected, found);
  }

  private expectOp(op: string): Token {
    if (!this.isOp(op)) this.fail([`"${op}"`]);
    return this.next();
  }

  parseAll(): ExprNode {
    const node = this.expression();
    if (this.peek().kind !== 'eof') this.fail(['an operator', 'the end of the expression']);
    return node;
  }

  private enter(): void {
    if (++this.depth > EXPRESSION_MAX_DEPTH) {
      const t = this.peek();
      throw expressionError(this.text, this.field, t.start, [`at most ${EXPRESSION_MAX_DEPTH} levels of nesting`], 'deeper nesting',
        `${this.field}: nests deeper than ${EXPRESSION_MAX_DEPTH} levels`);
    }
  }

  private expression(): ExprNode {
    this.enter();
    const node = this.or();
    this.depth--;
    return node;
  }

  /** One left-associative level: operands from `operand`, joined by the operators `ops` (symbols or keywords). */
  private leftAssociative(ops: readonly string[], operand: () => ExprNode): ExprNode {
    let left = operand();
    for (;;) {
      const t = this.peek();
      if (!((t.kind === 'op' || t.kind === 'keyword') && ops.includes(t.text))) return left;
      this.next();
      const right = operand();
      left = { kind: 'binary', op: t.text as BinaryOp, left, right, start: left.start, end: right.end };
    }
  }

  private or(): ExprNode { return this.leftAssociative(['or'], () => this.and()); }
  private and(): ExprNode { return this.leftAssociative(['and'], () => this.not()); }

  private not(): ExprNode {
    if (this.isKeyword('not')) {
      const t = this.next();
      this.enter();
      const operand = this.not();
      this.depth--;
      return { kind: 'unary', op: 'not', operand, start: t.start, end: operand.end };
    }
    return this.comparison();
  }

  private comparison(): ExprNode {
    const left = this.additive();
    const t = this.peek();
    if (t.kind !== 'op' || !COMPARISONS.has(t.text)) return left;
    this.next();
    const right = this.additive();
    const u = this.peek();
    if (u.kind === 'op' && COMPARISONS.has(u.text)) {
      const at = positionOf(this.text, u.start);
      throw expressionError(this.text, this.field, u.start, ['"and" between two comparisons'], JSON.stringify(u.text),
        `${this.field}: comparisons do not chain (line ${at.line}, column ${at.column}); write a < b and b < c`);
    }
    return { kind: 'binary', op: t.text as BinaryOp, left, right, start: left.start, end: right.end };
  }

  private additive(): ExprNode { return this.leftAssociative(['+', '-'], () => this.multiplicative()); }
  private multiplicative(): ExprNode { return this.leftAssociative(['*', '/', '%'], () => this.unary()); }

  private unary(): ExprNode {
    if (this.isOp('-')) {
      const t = this.next();
      this.enter();
      const operand = this.unary();
      this.depth--;
      return { kind: 'unary', op: '-', operand, start: t.start, end: operand.end };
    }
    return this.power();
  }

  private power(): ExprNode {
    const base = this.primary();
    if (!this.isOp('^')) return base;
    this.next();
    this.enter();
    const exponent = this.unary();
    this.depth--;
    return { kind: 'binary', op: '^', left: base, right: exponent, start: base.start, end: exponent.end };
  }

  private primary(): ExprNode {
    const t = this.peek();
    switch (t.kind) {
      case 'number':
        this.next();
        return { kind: 'number', value: t.value, unit: t.unit, start: t.start, end: t.end };
      case 'duration':
        this.next();
        return { kind: 'duration', ns: t.value, text: t.text, start: t.start, end: t.end };
      case 'string':
        this.next();
        return { kind: 'string', value: t.text, start: t.start, end: t.end };
      case 'quoted':
        this.next();
        return { kind: 'reference', name: t.text, quoted: true, start: t.start, end: t.end };
      case 'ident': {
        this.next();
        if (!this.isOp('(')) return { kind: 'reference', name: t.text, quoted: false, start: t.start, end: t.end };
        this.next();
        const args: ExprNode[] = [];
        if (!this.isOp(')')) {
          for (;;) {
            args.push(this.expression());
            if (this.isOp(',')) { this.next(); continue; }
            if (this.isOp(')')) break;
            this.fail(['","', '")"']);
          }
        }
        const close = this.next();
        return { kind: 'call', name: t.text, args, start: t.start, end: close.end };
      }
      case 'keyword':
        if (t.text === 'true' || t.text === 'false') {
          this.next();
          return { kind: 'bool', value: t.text === 'true', start: t.start, end: t.end };
        }
        if (t.text === 'if') {
          this.next();
          const cond = this.expression();
          if (!this.isKeyword('then')) this.fail(['"then"']);
          this.next();
          const then = this.expression();
          if (!this.isKeyword('else')) this.fail(['"else"']);
          this.next();
          const otherwise = this.expression();
          return { kind: 'if', cond, then, else: otherwise, start: t.start, end: otherwise.end };
        }
        break;
      case 'op':
        if (t.text === '(') {
          this.next();
          const inner = this.expression();
          this.expectOp(')');
          return inner;
        }
        break;
      default:
        break;
    }
    return this.fail(['a number', 'an attribute reference', 'a function call', '"("', '"if"', '"-"', '"not"']);
  }
}

/** Parses an expression; throws ServiceError 'invalid-expression' with the position and what was expected. */
export function parseExpression(text: string, field = 'expression'): ExprNode {
  return new Parser(text, field, tokenize(text, field)).parseAll();
}
