// The simulator's own plant: a few units (pumps, tanks, compressors, packaging lines) whose
// signals look like what a plant's collectors send, generated on the fly from a seed, so
// `npm run collector` needs nothing beside the repository. The same seed and start give the
// same points on every machine; streams have no end (live mode runs until stopped) unless
// `points` bounds them.
//
// What a unit's signals show:
//   - a duty cycle (running for 20..90 min, stopped for 5..30 min, short starting and
//     stopping phases, now and then a fault or a maintenance stop) that every signal of the
//     unit follows: flow, speed and current drop when it stops, a counter only counts while
//     it runs;
//   - analog values: first-order lag towards a target, setpoint steps, a slow daily drift,
//     sensor noise, rounded to the sensor's resolution; short bad-quality spells (quality 0);
//   - booleans, the equipment-state enum and string tags (batch id, product) reported by
//     exception: on change, and at least once a minute;
//   - timestamps a whole second apart plus 0..7 ms of collector jitter.
// Every stream of a unit replays the unit's duty cycle from the same seed, so the signals
// agree without sharing state (streams are pulled independently, batch by batch).
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { streamOfPoints, type SourceStream } from './dataset-source.js';

/** The registry enum set the equipment-state streams name; register it once (see README). */
export const EQUIPMENT_STATE = {
  name: 'equipment-state',
  members: [
    { ordinal: 0, name: 'stopped' },
    { ordinal: 1, name: 'starting' },
    { ordinal: 2, name: 'running' },
    { ordinal: 3, name: 'stopping' },
    { ordinal: 4, name: 'fault' },
    { ordinal: 5, name: 'maintenance' },
  ],
} as const;

/** Every enum set the plant's streams use, as `POST /v1/model/registries/enum-sets/entries` bodies. */
export const PLANT_ENUM_SETS: ReadonlyArray<{ name: string; members: ReadonlyArray<{ ordinal: number; name: string }> }> = [EQUIPMENT_STATE];

const enum Phase { Stopped = 0, Starting = 1, Running = 2, Stopping = 3, Fault = 4, Maintenance = 5 }

export interface PlantOptions {
  /** How many streams (signals), taken unit by unit in a fixed order. */
  series: number;
  seed: number;
  /** Time of each stream's first sample (ns since the Unix epoch). */
  startNs: bigint;
  /** Samples per stream; unbounded when absent. */
  points?: number;
}

type Signal =
  | { kind: 'analog'; name: string; unit: string; running: number; stopped: number; noise: number; decimals: number; lag: number; steps: boolean }
  | { kind: 'counter'; name: string; perSecond: number }
  | { kind: 'running' | 'alarm'; name: string }
  | { kind: 'state'; name: string }
  | { kind: 'batch' | 'product'; name: string };

/** Each unit kind's signals, in stream order. */
const UNITS: Record<string, Signal[]> = {
  pump: [
    { kind: 'analog', name: 'flow', unit: 'm3/h', running: 120, stopped: 0, noise: 0.8, decimals: 1, lag: 0.08, steps: true },
    { kind: 'analog', name: 'discharge-pressure', unit: 'bar', running: 6.5, stopped: 1.2, noise: 0.05, decimals: 2, lag: 0.1, steps: true },
    { kind: 'analog', name: 'speed', unit: 'rpm', running: 1480, stopped: 0, noise: 3, decimals: 0, lag: 0.15, steps: false },
    { kind: 'analog', name: 'motor-current', unit: 'A', running: 42, stopped: 0, noise: 0.4, decimals: 1, lag: 0.2, steps: false },
    { kind: 'running', name: 'running' },
    { kind: 'state', name: 'state' },
    { kind: 'counter', name: 'run-seconds', perSecond: 1 },
  ],
  tank: [
    { kind: 'analog', name: 'level', unit: '%', running: 78, stopped: 35, noise: 0.1, decimals: 2, lag: 0.002, steps: true },
    { kind: 'analog', name: 'temperature', unit: 'degC', running: 64, stopped: 48, noise: 0.05, decimals: 2, lag: 0.004, steps: true },
    { kind: 'alarm', name: 'high-level' },
  ],
  compressor: [
    { kind: 'analog', name: 'discharge-pressure', unit: 'bar', running: 8.2, stopped: 0.5, noise: 0.04, decimals: 2, lag: 0.05, steps: true },
    { kind: 'analog', name: 'outlet-temperature', unit: 'degC', running: 92, stopped: 30, noise: 0.2, decimals: 1, lag: 0.01, steps: false },
    { kind: 'analog', name: 'vibration', unit: 'mm/s', running: 2.8, stopped: 0.05, noise: 0.6, decimals: 3, lag: 0.5, steps: false },
    { kind: 'running', name: 'running' },
    { kind: 'state', name: 'state' },
  ],
  line: [
    { kind: 'counter', name: 'good-count', perSecond: 4 },
    { kind: 'counter', name: 'reject-count', perSecond: 0.05 },
    { kind: 'state', name: 'state' },
    { kind: 'batch', name: 'batch-id' },
    { kind: 'product', name: 'product' },
  ],
};
const UNIT_ORDER = ['pump', 'tank', 'compressor', 'line'] as const;
const UNITS_PER_AREA = 4;
const PRODUCTS = ['PX-200 500ml', 'PX-200 1l', 'PX-310 250ml', 'QA-15 2l'];
const HEARTBEAT_S = 60;
const SECOND_NS = 1_000_000_000n;

const TYPE: Record<Signal['kind'], ValueType> = { analog: 'float64', counter: 'int64', running: 'boolean', alarm: 'boolean', state: 'enum', batch: 'string', product: 'string' };

/** sfc32 seeded through splitmix32: a small generator that gives the same numbers everywhere. */
function random(seed: number): () => number {
  let x = seed >>> 0;
  const split = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

/** A unit's duty cycle, one step a second; every stream of the unit runs its own copy from the same seed. */
class DutyCycle {
  phase: Phase;
  private left: number;
  private readonly r: () => number;
  /** Seconds the unit has been in its current phase. */
  inPhase = 0;

  constructor(seed: number) {
    this.r = random(seed);
    this.phase = this.r() < 0.7 ? Phase.Running : Phase.Stopped;
    this.left = this.durationOf(this.phase) * this.r(); // start somewhere inside the phase
  }

  private durationOf(p: Phase): number {
    const r = this.r();
    switch (p) {
      case Phase.Running: return 1200 + Math.floor(r * 4200);
      case Phase.Stopped: return 300 + Math.floor(r * 1500);
      case Phase.Starting: return 15 + Math.floor(r * 10);
      case Phase.Stopping: return 10 + Math.floor(r * 10);
      case Phase.Fault: return 120 + Math.floor(r * 480);
      case Phase.Maintenance: return 1800 + Math.floor(r * 1800);
    }
  }

  step(): void {
    this.inPhase++;
    if (--this.left > 0) {
      if (this.phase === Phase.Running && this.r() < 1 / 20_000) this.enter(Phase.Fault);
      return;
    }
    const r = this.r();
    const next = this.phase === Phase.Running ? Phase.Stopping
      : this.phase === Phase.Stopping ? (r < 0.05 ? Phase.Maintenance : Phase.Stopped)
      : this.phase === Phase.Starting ? Phase.Running
      : Phase.Starting; // from stopped, fault or maintenance
    this.enter(next);
  }

  private enter(p: Phase): void {
    this.phase = p;
    this.left = this.durationOf(p);
    this.inPhase = 0;
  }

  /** 0 stopped .. 1 running; ramps through starting and stopping. */
  load(): number {
    switch (this.phase) {
      case Phase.Running: return 1;
      case Phase.Starting: return Math.min(1, this.inPhase / 15);
      case Phase.Stopping: return Math.max(0, 1 - this.inPhase / 10);
      default: return 0;
    }
  }
}

const roundTo = (x: number, decimals: number) => { const f = 10 ** decimals; return Math.round(x * f) / f; };

function* samples(sig: Signal, unitSeed: number, streamSeed: number, opts: PlantOptions): Generator<[bigint, unknown, number]> {
  const duty = new DutyCycle(unitSeed);
  const r = random(streamSeed);
  const scale = 0.85 + 0.3 * r(); // units of one kind differ a little
  let target = 0, level = 0, setpointShift = 0, count = Math.floor(r() * 5e5), badLeft = 0, carry = 0;
  let batch = 1000 + Math.floor(r() * 9000), product = Math.floor(r() * PRODUCTS.length);
  let last: unknown = undefined, lastSentS = -HEARTBEAT_S;
  const limit = opts.points ?? Infinity;
  const startS = Number(opts.startNs / SECOND_NS);
  for (let i = 0; i < limit; i++) {
    duty.step();
    const jitterNs = BigInt(Math.floor(r() * 8)) * 1_000_000n;
    const ts = opts.startNs + BigInt(i) * SECOND_NS + jitterNs;
    let value: unknown;
    let quality = 192;
    switch (sig.kind) {
      case 'analog': {
        if (sig.steps && r() < 1 / 1800) setpointShift = (r() - 0.5) * 0.2; // an operator moves the setpoint
        const load = duty.load();
        target = (sig.stopped + (sig.running - sig.stopped) * load) * scale * (1 + setpointShift);
        if (i === 0) level = target;
        level += sig.lag * (target - level);
        const drift = Math.sin(((startS + i) % 86_400) / 86_400 * 2 * Math.PI) * 0.01 * sig.running * scale;
        const noise = (r() + r() + r() - 1.5) * sig.noise * (load > 0 || sig.stopped > 0 ? 1 : 0.05);
        value = roundTo(Math.max(0, level + drift + noise), sig.decimals) + 0; // + 0: no -0
        if (badLeft > 0) badLeft--;
        else if (r() < 1 / 7200) badLeft = 5 + Math.floor(r() * 40); // a sensor spell
        if (badLeft > 0) quality = 0;
        break;
      }
      case 'counter':
        if (duty.phase === Phase.Running) { carry += sig.perSecond * (0.5 + r()); const whole = Math.floor(carry); count += whole; carry -= whole; }
        value = count;
        break;
      case 'running':
        value = duty.phase === Phase.Running || duty.phase === Phase.Starting;
        break;
      case 'alarm':
        value = duty.phase === Phase.Running && (duty.inPhase % 2400) > 2100; // the level peaks near the end of each fill
        break;
      case 'state':
        value = duty.phase as number;
        break;
      case 'batch':
        if (duty.phase === Phase.Starting && duty.inPhase === 0) batch++;
        value = `B-${batch}`;
        break;
      case 'product':
        if (duty.phase === Phase.Maintenance && duty.inPhase === 0) product = (product + 1) % PRODUCTS.length;
        value = PRODUCTS[product];
        break;
    }
    // Discrete signals are reported by exception, with a heartbeat a minute.
    if (sig.kind !== 'analog' && sig.kind !== 'counter') {
      if (value === last && i - lastSentS < HEARTBEAT_S) continue;
      last = value;
      lastSentS = i;
      if (sig.kind === 'state') value = { enum_set: EQUIPMENT_STATE.name, ordinal: value };
    }
    yield [ts, value, quality];
  }
}

export interface PlantSignal {
  /** Stream name, e.g. `plant/area-1/pump-101/flow`. */
  name: string;
  type: ValueType;
  /** Engineering unit of analog signals (for the user's attributes; streams carry no unit). */
  unit?: string;
  enumSet?: string;
}

/** The plant's signals in stream order (names, types, units), without generating points. */
export function plantSignals(series: number): PlantSignal[] {
  const out: PlantSignal[] = [];
  for (let u = 0; out.length < series; u++) {
    const kind = UNIT_ORDER[u % UNIT_ORDER.length];
    const area = 1 + Math.floor(u / UNITS_PER_AREA);
    const tag = `${kind}-${100 * (1 + (u % UNIT_ORDER.length)) + area}`;
    for (const sig of UNITS[kind]) {
      if (out.length >= series) break;
      out.push({
        name: `plant/area-${area}/${tag}/${sig.name}`, type: TYPE[sig.kind],
        ...(sig.kind === 'analog' ? { unit: sig.unit } : {}),
        ...(sig.kind === 'state' ? { enumSet: EQUIPMENT_STATE.name } : {}),
      });
    }
  }
  return out;
}

/** The plant's streams, ready for the simulator. */
export function plantStreams(opts: PlantOptions): SourceStream[] {
  if (!Number.isInteger(opts.series) || opts.series < 1) throw new RangeError(`series must be a positive integer, got ${opts.series}`);
  const signals = plantSignals(opts.series);
  const out: SourceStream[] = [];
  for (let u = 0; out.length < opts.series; u++) {
    const unitSeed = Math.imul(opts.seed, 1_000_003) + u;
    const defs = UNITS[UNIT_ORDER[u % UNIT_ORDER.length]];
    for (let k = 0; k < defs.length && out.length < opts.series; k++) {
      const s = signals[out.length];
      out.push(streamOfPoints(s.name, s.type, samples(defs[k], unitSeed, Math.imul(unitSeed, 31) + k + 7, opts), s.enumSet));
    }
  }
  return out;
}
