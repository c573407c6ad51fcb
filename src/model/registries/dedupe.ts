// The dedupe gate's comparisons. Registries drift when the same meaning gets a second
// entry that differs only in how it was typed ("Degree Celsius", "degree-celsius") or
// that states the same two-sided fact the other way round ("Valve Open" beside "Valve
// Closed": one binary concept whose 1 means the opposite). Pure functions over names;
// the store runs them against the current entries of one kind.

export type VariantKind = 'identical' | 'case' | 'spacing' | 'punctuation' | 'polarity' | 'symbol';

/** Kinds whose entries name a two-sided fact, where an opposite-polarity name is a duplicate. */
export const POLARITY_KINDS: ReadonlySet<string> = new Set(['enum-concepts', 'enum-sets', 'link-types']);

/** Case, spacing and punctuation folded away: letters and digits of any script, lower case. */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * Unit symbols are case-sensitive (mS is not ms, MA is not mA), so only compatibility
 * forms (m³ and m3), blanks and multiplication marks (N·m, N*m, N.m, N m) fold.
 */
export function symbolKey(symbol: string): string {
  return symbol.normalize('NFKC').replace(/[\s^·⋅*.]+/gu, '');
}

// Opposite pairs: each word maps to the name of its pair, so both sides get one token.
const OPPOSITES: Array<[string[], string[]]> = [
  [['open', 'opened', 'opening'], ['close', 'closed', 'closing', 'shut']],
  [['on'], ['off']],
  [['start', 'started', 'starting', 'running', 'run'], ['stop', 'stopped', 'stopping']],
  [['high', 'hi'], ['low', 'lo']],
  [['enable', 'enabled'], ['disable', 'disabled']],
  [['true', 'yes'], ['false']],
  [['active'], ['inactive']],
  [['up'], ['down']],
  [['in', 'into', 'inlet', 'input'], ['out', 'outlet', 'output']],
  [['energised', 'energized'], ['deenergised', 'deenergized']],
  [['increase', 'increasing'], ['decrease', 'decreasing']],
  [['max', 'maximum'], ['min', 'minimum']],
  [['upstream'], ['downstream']],
  [['feeds', 'fed', 'feed'], ['feedsfrom']],
  [['supplies', 'supplied', 'supply'], ['suppliedfrom']],
  [['parent'], ['child']],
  [['source'], ['sink']],
  [['forward'], ['reverse']],
  [['healthy', 'ok', 'normal'], ['faulted', 'fault', 'abnormal']],
];
const POLE = new Map<string, string>();
for (const [a, b] of OPPOSITES) {
  const pole = `~${a[0]}|${b[0]}`;
  for (const w of [...a, ...b]) POLE.set(w, pole);
}
/** Negations and passive/relational fillers that do not change which fact a name states. */
const FILLERS = new Set(['not', 'non', 'no', 'un', 'by', 'of', 'is', 'to', 'from', 'the', 'a', 'an']);

/** Word tokens with opposite words merged and negations dropped, in sorted order. */
export function polarityKey(name: string): string {
  const words = name.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0 && !FILLERS.has(w));
  return words.map((w) => POLE.get(w) ?? w).sort().join(' ');
}

/** How `candidate` varies `existing`, or null when they are distinct names. */
export function nameVariant(candidate: string, existing: string, polarity: boolean): VariantKind | null {
  if (candidate === existing) return 'identical';
  const a = candidate.normalize('NFKC');
  const b = existing.normalize('NFKC');
  if (a.toLowerCase() === b.toLowerCase()) return 'case';
  const blankless = (s: string) => s.toLowerCase().replace(/\s+/gu, '');
  if (blankless(a) === blankless(b)) return 'spacing';
  if (nameKey(a) === nameKey(b)) return 'punctuation';
  if (polarity) {
    // Opposite words, negations and word order fold away: "Valve Open", "Valve Closed",
    // "Valve not open" and "Open valve" all state one binary fact.
    const pa = polarityKey(a);
    if (pa.length > 0 && pa === polarityKey(b)) return 'polarity';
  }
  return null;
}
