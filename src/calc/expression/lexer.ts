// Tokens of the expression language. Quoting (PI Asset Analytics' convention):
//   'Discharge Pressure'  a reference to an attribute (name or relative path: '..|Flow',
//                         '../Pump 2|Flow'); a quote inside is doubled ('O''Brien').
//   "Running"             a string (an enum member by name); a quote inside is doubled.
//   Flow                  a bare reference: letters, digits and _ only.
//   5 bar, 3.2 m3/h       a number and a unit symbol (after a space or not); a symbol with
//                         other characters goes in backticks: 5 `%`.
//   10s 5m 1h 1d 250ms    a duration: a number with s, ms, m, min, h or d and no space
//                         (`5 m` is five metres, `5m` five minutes).
import { ServiceError } from '../../errors.js';
import { positionOf } from './ast.js';

export type TokenKind = 'number' | 'duration' | 'string' | 'quoted' | 'ident' | 'keyword' | 'op' | 'eof';

export interface Token {
  kind: TokenKind;
  /** The token as written (for number: the numeral), or the unquoted text of a string or quoted reference. */
  text: string;
  start: number;
  end: number;
  /** number: its value; duration: ns. */
  value: number;
  /** number: the unit symbol written after it, or null. */
  unit: string | null;
}

export const KEYWORDS = new Set(['and', 'or', 'not', 'if', 'then', 'else', 'true', 'false']);

/** Durations: symbol → ns. */
export const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1e6, s: 1e9, m: 60e9, min: 60e9, h: 3600e9, d: 86400e9 };

const OPERATORS = ['<=', '>=', '==', '!=', '+', '-', '*', '/', '%', '^', '<', '>', '(', ')', ','];

const IDENT_START = /[\p{L}_]/u;
const IDENT_PART = /[\p{L}\p{N}_]/u;
const UNIT_START = /[\p{L}°µ]/u;
const UNIT_PART = /[\p{L}\p{N}°µ/·²³_]/u;

/** Expressions longer than this are refused before lexing (a rule is a line or a few, not a program). */
export const EXPRESSION_MAX_LENGTH = 10_000;

export function expressionError(text: string, field: string, offset: number, expected: string[], found: string, message?: string): ServiceError {
  const position = positionOf(text, offset);
  return new ServiceError('invalid-expression',
    message ?? `${field}: expected ${expected.join(' or ')} at line ${position.line}, column ${position.column}, found ${found}`,
    { field, position, expected, found });
}

function describe(text: string, at: number): string {
  return at >= text.length ? 'the end of the expression' : JSON.stringify(text.slice(at, at + 12));
}

export function tokenize(text: string, field: string): Token[] {
  if (text.length > EXPRESSION_MAX_LENGTH) {
    throw expressionError(text, field, EXPRESSION_MAX_LENGTH, [`at most ${EXPRESSION_MAX_LENGTH} characters`], `${text.length} characters`,
      `${field}: longer than ${EXPRESSION_MAX_LENGTH} characters`);
  }
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  const push = (kind: TokenKind, tokenText: string, start: number, end: number, value = 0, unit: string | null = null) =>
    tokens.push({ kind, text: tokenText, start, end, value, unit });
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue; }
    const start = i;
    if (c >= '0' && c <= '9') {
      let j = i;
      while (j < n && text[j] >= '0' && text[j] <= '9') j++;
      if (text[j] === '.' && text[j + 1] >= '0' && text[j + 1] <= '9') {
        j++;
        while (j < n && text[j] >= '0' && text[j] <= '9') j++;
      }
      if ((text[j] === 'e' || text[j] === 'E')) {
        let k = j + 1;
        if (text[k] === '+' || text[k] === '-') k++;
        if (text[k] >= '0' && text[k] <= '9') {
          while (k < n && text[k] >= '0' && text[k] <= '9') k++;
          j = k;
        }
      }
      const numeral = text.slice(i, j);
      const value = Number(numeral);
      if (!Number.isFinite(value)) throw expressionError(text, field, start, ['a finite number'], JSON.stringify(numeral));
      // A duration: suffix glued to the numeral and not continued by another name character.
      let k = j;
      while (k < n && /[a-z]/.test(text[k])) k++;
      const suffix = text.slice(j, k);
      if (suffix in DURATION_UNITS && !(k < n && IDENT_PART.test(text[k]))) {
        push('duration', text.slice(i, k), start, k, value * DURATION_UNITS[suffix]);
        i = k;
        continue;
      }
      // A unit: after optional blanks, a backticked symbol or a run of unit characters that is not a keyword or a call.
      let u = j;
      while (u < n && (text[u] === ' ' || text[u] === '\t')) u++;
      let unit: string | null = null;
      let end = j;
      if (text[u] === '`') {
        const close = text.indexOf('`', u + 1);
        if (close < 0 || close === u + 1) throw expressionError(text, field, u, ['a unit symbol closed by `'], describe(text, u));
        unit = text.slice(u + 1, close);
        end = close + 1;
      } else if (u < n && UNIT_START.test(text[u])) {
        let w = u + 1;
        while (w < n && UNIT_PART.test(text[w])) w++;
        const word = text.slice(u, w);
        let after = w;
        while (after < n && text[after] === ' ') after++;
        if (!KEYWORDS.has(word) && text[after] !== '(') { unit = word; end = w; }
      }
      push('number', numeral, start, end, value, unit);
      i = end;
      continue;
    }
    if (c === '\'' || c === '"') {
      let j = i + 1;
      let body = '';
      for (;;) {
        if (j >= n) throw expressionError(text, field, n, [`${c} closing the ${c === '"' ? 'string' : 'reference'} opened at offset ${start}`], 'the end of the expression');
        if (text[j] === c) {
          if (text[j + 1] === c) { body += c; j += 2; continue; }
          break;
        }
        body += text[j++];
      }
      if (c === '\'' && body.length === 0) throw expressionError(text, field, start, ['an attribute name between the quotes'], '\'\'');
      push(c === '"' ? 'string' : 'quoted', body, start, j + 1);
      i = j + 1;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < n && IDENT_PART.test(text[j])) j++;
      const word = text.slice(i, j);
      push(KEYWORDS.has(word) ? 'keyword' : 'ident', word, start, j);
      i = j;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op === undefined) {
      throw expressionError(text, field, start, ['an operand or an operator'], describe(text, start));
    }
    push('op', op, start, i + op.length);
    i += op.length;
  }
  push('eof', '', n, n);
  return tokens;
}
