import t from 'tap';
import fc from 'fast-check';
import { parseRatio, toDouble, fromDouble, ratio, formatRatio } from '../../src/model/registries/exact-ratio.js';
import { unitConversion, convertValue, type UnitScale } from '../../src/model/registries/unit-conversion.js';
import { SYSTEM_QUANTITY_KINDS, systemEntryId } from '../../src/model/registries/system-seed.js';

const SEED = 20240607;
t.comment(`fast-check seed ${SEED}`);

/** The system units by symbol, as the seed defines them. */
const units = new Map<string, UnitScale>();
for (const qk of SYSTEM_QUANTITY_KINDS) {
  const kindId = systemEntryId('quantity-kinds', qk.name);
  units.set(qk.canonical.symbol, { id: qk.canonical.symbol, kindId, factor: ratio(1n), offset: ratio(0n) });
  for (const u of qk.units) units.set(u.symbol, { id: u.symbol, kindId, factor: parseRatio(u.factor)!, offset: parseRatio(u.offset ?? '0')! });
}
const U = (s: string) => { const u = units.get(s); if (!u) throw new Error(`no unit ${s}`); return u; };
const conv = (v: number, a: string, b: string) => convertValue(v, U(a), U(b));

t.test('temperatures convert exactly between °C, K and °F', async (t) => {
  t.equal(conv(0, '°C', 'K'), 273.15);
  t.equal(conv(273.15, 'K', '°C'), 0);
  t.equal(conv(100, '°C', '°F'), 212);
  t.equal(conv(-40, '°C', '°F'), -40);
  t.equal(conv(98.6, '°F', '°C'), 37);
  t.equal(conv(0.2, '°C', 'K'), 273.35, 'plain doubles give 273.34999999999997');
  t.not(0.2 + 273.15, 273.35);
  t.equal(conv(36.6, '°C', '°F'), 97.88, 'plain doubles give 97.88000000000001');
  t.not(36.6 * 9 / 5 + 32, 97.88);
  t.equal(conv(0, 'K', '°F'), -459.67);
  t.equal(conv(25.1, '°C', 'K'), 298.25);
  t.equal(conv(491.67, '°R', '°C'), 0);
});

t.test('pressures convert exactly between bar, kPa, Pa and psi', async (t) => {
  t.equal(conv(1, 'bar', 'kPa'), 100);
  t.equal(conv(1, 'bar', 'Pa'), 100000);
  t.equal(conv(2.5, 'kPa', 'bar'), 0.025);
  t.equal(conv(1, 'atm', 'kPa'), 101.325);
  // 1 psi = 6894.757293168361336… Pa; the nearest doubles are …360775 and …361684, so …362 prints.
  t.equal(conv(1, 'psi', 'Pa'), 6894.757293168362, 'psi from its definition, correctly rounded');
  t.equal(conv(14.5, 'psi', 'kPa'), toDouble(parseRatio('14.5*4.4482216152605/0.64516')!));
});

t.test('flows, energy and time convert through their canonical units', async (t) => {
  t.equal(conv(3600, 'm³/h', 'm³/s'), 1);
  t.equal(conv(1, 'm³/s', 'm³/h'), 3600);
  t.equal(conv(60, 'L/min', 'L/s'), 1);
  t.equal(conv(1, 'kWh', 'MJ'), 3.6);
  t.equal(conv(90, 'min', 'h'), 1.5);
  t.equal(conv(50, '%', '1'), 0.5);
});

t.test('units of different quantity kinds do not convert', async (t) => {
  t.throws(() => conv(1, 'bar', 'K'), { code: 'invalid-request' });
});

t.test('the same unit is the identity and passes non-finite values through', async (t) => {
  const c = unitConversion(U('K'), U('K'));
  t.ok(c.identity);
  t.equal(c.apply(0.1 + 0.2), 0.1 + 0.2);
  t.ok(Number.isNaN(unitConversion(U('°C'), U('K')).apply(NaN)));
  const col = new Float64Array([0, 100, -40]);
  unitConversion(U('°C'), U('°F')).applyColumn(col);
  t.same([...col], [32, 212, -40]);
});

t.test('ratios parse decimals, fractions and products exactly', async (t) => {
  t.equal(formatRatio(parseRatio('273.15')!), '5463/20');
  t.equal(formatRatio(parseRatio('5/9')!), '5/9');
  t.equal(formatRatio(parseRatio('-1e-3')!), '-1/1000');
  t.equal(formatRatio(parseRatio('550*0.3048*4.4482216152605')!), formatRatio(parseRatio('745.69987158227022')!));
  t.equal(parseRatio('abc'), null);
  t.equal(parseRatio('1/0'), null);
  t.equal(parseRatio('.'), null);
});

t.test('every finite double survives fromDouble then toDouble unchanged', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => toDouble(fromDouble(x)) === x),
    { seed: SEED, numRuns: 5000 }));
  t.equal(toDouble(fromDouble(Number.MIN_VALUE)), Number.MIN_VALUE, 'the smallest subnormal');
  t.equal(toDouble(fromDouble(Number.MAX_VALUE)), Number.MAX_VALUE);
});

t.test('toDouble rounds a ratio to the nearest double, ties to even', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10n ** 25n }), (n, d) => {
    const x = toDouble(ratio(n, d));
    // Compare with the decimal expansion to 40 significant digits, which Number() rounds correctly
    // except at exact ties, which a ratio with such a denominator essentially never hits.
    const scale = 10n ** 60n;
    const q = (n * scale) / d;
    const text = `${q < 0n ? '-' : ''}${(q < 0n ? -q : q).toString().padStart(61, '0').replace(/^(\d+)(\d{60})$/, '$1.$2')}`;
    return x === Number(text);
  }), { seed: SEED, numRuns: 3000 }));
  t.equal(toDouble(ratio(1n, 3n)), 1 / 3);
  t.equal(toDouble(ratio((1n << 53n) + 1n)), 2 ** 53, 'a tie rounds to the even mantissa');
  t.equal(toDouble(ratio((1n << 53n) + 3n)), 2 ** 53 + 4, 'the other tie rounds up to even');
});

t.test('decimal values with up to six fraction digits round-trip °C → °F → °C exactly', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: -300_000_000, max: 300_000_000 }), (micro) => {
    const c = micro / 1e6;
    return conv(conv(c, '°C', '°F'), '°F', '°C') === c;
  }), { seed: SEED, numRuns: 2000 }));
});
