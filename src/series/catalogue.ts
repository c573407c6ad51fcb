// The internal API for series records: create (routes, ingest for streams that arrive
// without a series: they land in staging), look up, change the writable class, and say
// which scope a series belongs to. Model and LMDB meta are kept in agreement by creating
// the LMDB meta inside the model transaction, before it commits: if the model commit
// then fails, the orphan meta is invisible (every route looks the series up in the model
// first) and a retry with the same uuid is a no-op in the engine.
import { randomUUID } from 'node:crypto';
import type { Db } from '../model/db.js';
import { modelTransaction, type Who } from '../model/tx-log.js';
import { nowNs } from '../clock.js';
import { ServiceError, invalid } from '../errors.js';
import type { AccessTarget } from '../auth/access-types.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import type { EnumSetRef, SeriesStore } from '../storage/series-store.js';
import {
  insertSeriesRow, insertSeriesRows, listSeriesRows, seriesById, seriesByIds, seriesBySourceName, seriesBySourceNames, updateWritableClassRow,
  SOURCE_NAME_MAX, VALUE_TYPES, type SeriesRecord, type SeriesRowFilter,
} from './records.js';
import { SeriesLookups } from './series-lookups.js';
import { UUID_RE } from '../uuid.js';
import { checkWriterClass } from '../model/vocabularies.js';

export interface CreateSeriesInput {
  /** A caller-chosen uuid (idempotent re-creation); a fresh one when absent. */
  id?: string;
  sourceName: string;
  valueType: ValueType;
  /** Required for enum series: the enum set and the ordinals its points may carry. */
  enumSet?: EnumSetRef;
  /** Default 'collector': points come from a collector stream. */
  writableClass?: string;
}


function checkInput(s: CreateSeriesInput): void {
  if (s.id !== undefined && !UUID_RE.test(s.id)) throw invalid('id', 'must be a UUID');
  if (typeof s.sourceName !== 'string' || s.sourceName.length === 0 || s.sourceName.length > SOURCE_NAME_MAX) throw invalid('source_name', `must be 1..${SOURCE_NAME_MAX} characters`);
  if (!VALUE_TYPES.includes(s.valueType)) throw invalid('value_type', `must be one of ${VALUE_TYPES.join(', ')}`);
  if ((s.valueType === 'enum') !== (s.enumSet !== undefined)) throw invalid('enum_set', 'is required for enum series and only for them');
  if (s.enumSet && !UUID_RE.test(s.enumSet.id)) throw invalid('enum_set.id', 'must be a UUID');
  if (s.writableClass !== undefined) checkWriterClass('writable_class', s.writableClass);
}

/**
 * What never changes in a series row once it is committed (rows are never deleted, and
 * only the writable class is ever updated): what ensureManyForSource answers with, so that
 * a name seen once can be answered again from memory.
 */
export type SeriesIdentity = Pick<SeriesRecord, 'id' | 'sourceName' | 'valueType' | 'enumSetId' | 'createdTx' | 'createdNs'>;

/** One input of ensureManyForSource: the series found or created, or why not. */
export type EnsureOutcome = { record: SeriesIdentity; created: boolean; error?: undefined } | { record?: undefined; created?: undefined; error: ServiceError };

/** Identities kept by source name; past this many the map starts again empty (a plant of 250,000 tags reconnects in memory). */
const IDENTITIES_KEPT = 250_000;

/** Series created per model transaction (and per LMDB write) by ensureManyForSource. */
export const CREATE_BATCH = 5_000;
/** Source names or ids looked up per query. */
const LOOKUP_BATCH = 10_000;

export class SeriesCatalogue {
  /** Records and scopes cached in process, invalidated by every model commit (series-lookups.ts). */
  private readonly lookups: SeriesLookups;
  /** Series per model transaction in ensureManyForSource (tests lower it to see several batches). */
  createBatchSize = CREATE_BATCH;
  /**
   * Committed series by source name, as this process found or created them. Never stale:
   * a committed row keeps its id, name, type and enum set for good. A collector that
   * reconnects with 100,000 known streams is answered from here, with no query at all.
   */
  private readonly identities = new Map<string, SeriesIdentity>();

  constructor(private readonly db: Db, private readonly store: SeriesStore) {
    this.lookups = new SeriesLookups(db);
  }

  close(): void {
    this.lookups.close();
  }

  /** Creates a series in staging; a taken source name is 409 name-conflict. */
  async create(input: CreateSeriesInput, who: Who): Promise<SeriesRecord> {
    const r = await this.createOrFind(input, who, false);
    return r.record;
  }

  /**
   * Find-or-create by source name, for ingest: a stream that arrives without a series
   * gets one of its declared type. An existing series of another type is a conflict.
   */
  async ensureForSource(input: CreateSeriesInput, who: Who): Promise<{ record: SeriesRecord; created: boolean }> {
    return this.createOrFind(input, who, true);
  }

  /**
   * ensureForSource for many inputs at once (a collector declaring thousands of streams):
   * the existing series are looked up by name in a few queries, and the missing ones are
   * created CREATE_BATCH at a time, each batch in one model transaction (one multi-row
   * insert, one event per series) with its LMDB metas in one write. Outcomes are per input,
   * in order: a bad input or a type conflict is that input's error, never the others'. A
   * batch whose transaction fails is created again one series at a
   * time, so the failure stays with the input that caused it.
   */
  async ensureManyForSource(inputs: readonly CreateSeriesInput[], who: Who): Promise<EnsureOutcome[]> {
    const out: Array<EnsureOutcome | undefined> = new Array(inputs.length);
    const pending = new Map<string, number>(); // source name -> first input index
    const sameNameAs: Array<[number, number]> = [];
    inputs.forEach((input, i) => {
      try { checkInput(input); } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        out[i] = { error: e };
        return;
      }
      const first = pending.get(input.sourceName);
      if (first === undefined) pending.set(input.sourceName, i);
      else sameNameAs.push([i, first]);
    });
    const byName = new Map<string, SeriesIdentity>();
    const settle = (i: number, found: SeriesIdentity, created: boolean) => {
      byName.set(found.sourceName, found);
      this.keep(found);
      try { out[i] = { record: this.sameType(found, inputs[i]), created }; } catch (e) { out[i] = { error: e as ServiceError }; }
    };
    for (const [name, i] of pending) {
      const known = this.identities.get(name);
      if (known === undefined) continue;
      pending.delete(name);
      settle(i, known, false);
    }
    const names = [...pending.keys()];
    for (let k = 0; k < names.length; k += LOOKUP_BATCH) {
      for (const found of await seriesBySourceNames(this.db, names.slice(k, k + LOOKUP_BATCH))) {
        const i = pending.get(found.sourceName);
        if (i === undefined) continue;
        pending.delete(found.sourceName);
        settle(i, found, false);
      }
    }
    const missing = [...pending.values()];
    const size = Math.max(1, this.createBatchSize);
    for (let k = 0; k < missing.length; k += size) {
      const batch = missing.slice(k, k + size);
      try {
        const made = await this.createBatch(batch.map((i) => inputs[i]), who);
        batch.forEach((i, j) => settle(i, made[j].record, made[j].created));
      } catch {
        // whatever failed the batch (a conflict in one input, an error of the database),
        // each input is tried on its own: a ServiceError is that input's outcome, and any
        // other error fails the call as before
        for (const i of batch) {
          try {
            const r = await this.createOrFind(inputs[i], who, true);
            byName.set(r.record.sourceName, r.record);
            this.keep(r.record);
            out[i] = r;
          } catch (e2) {
            if (!(e2 instanceof ServiceError)) throw e2;
            out[i] = { error: e2 };
          }
        }
      }
    }
    for (const [i, first] of sameNameAs) {
      const found = byName.get(inputs[i].sourceName);
      if (found) settle(i, found, false);
      else out[i] = out[first];
    }
    return out as EnsureOutcome[];
  }

  /**
   * Creates the series of these (checked, distinct) inputs in one model transaction: rows
   * inserted together, the LMDB metas of those inserted in one write before the commit
   * (as createOrFind), a 'created' event each. A name taken meanwhile (another writer
   * created it) is returned as found, not created.
   */
  private async createBatch(inputs: readonly CreateSeriesInput[], who: Who): Promise<Array<{ record: SeriesRecord; created: boolean }>> {
    const rows = inputs.map((input) => ({
      id: (input.id ?? randomUUID()).toLowerCase(), sourceName: input.sourceName, valueType: input.valueType,
      enumSetId: input.enumSet?.id ?? null, writableClass: input.writableClass ?? 'collector', createdNs: nowNs(),
    }));
    const reason = who.reason ?? `create ${inputs.length} series`;
    const committed = await modelTransaction(this.db, { principal: who.principal, reason }, async (tx, txId, events) => {
      const inserted = new Map<string, SeriesRecord>();
      for (const r of await insertSeriesRows(tx, txId, rows)) inserted.set(r.sourceName, r);
      const raced = new Map<string, SeriesRecord>();
      if (inserted.size < rows.length) {
        const taken = rows.filter((r) => !inserted.has(r.sourceName)).map((r) => r.sourceName);
        for (const r of await seriesBySourceNames(tx, taken)) raced.set(r.sourceName, r);
      }
      const created = rows.map((r, i) => ({ row: r, input: inputs[i] })).filter((x) => inserted.has(x.row.sourceName));
      await this.store.createSeriesMany(created.map(({ row, input }) => ({ id: row.id, type: row.valueType, enumSet: input.enumSet, writableClass: row.writableClass })));
      for (const { row, input } of created) {
        events.emit('series', row.id, 'created', { source_name: row.sourceName, value_type: row.valueType, enum_set_id: input.enumSet?.id ?? null, writable_class: row.writableClass });
      }
      return rows.map((r) => {
        const rec = inserted.get(r.sourceName);
        if (rec) return { record: rec, created: true };
        const found = raced.get(r.sourceName);
        // taken by a row that then vanished (deleted in between): let the caller retry one by one
        if (!found) throw new ServiceError('conflict', `source_name: ${r.sourceName} was taken and released while it was being created`, { field: 'source_name' });
        return { record: found, created: false };
      });
    });
    return committed.result;
  }

  /** Records of these ids (absent ids are missing from the map). */
  async getMany(ids: readonly string[]): Promise<Map<string, SeriesRecord>> {
    const out = new Map<string, SeriesRecord>();
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    for (let k = 0; k < unique.length; k += LOOKUP_BATCH) {
      for (const r of await seriesByIds(this.db, unique.slice(k, k + LOOKUP_BATCH))) out.set(r.id, r);
    }
    return out;
  }

  private async createOrFind(input: CreateSeriesInput, who: Who, reuse: boolean): Promise<{ record: SeriesRecord; created: boolean }> {
    checkInput(input);
    if (reuse) {
      const found = await seriesBySourceName(this.db, input.sourceName);
      if (found) return { record: this.sameType(found, input), created: false };
    }
    const id = (input.id ?? randomUUID()).toLowerCase();
    const writableClass = input.writableClass ?? 'collector';
    let raced: SeriesRecord | null = null;
    const committed = await modelTransaction(this.db, { principal: who.principal, reason: who.reason ?? `create series ${input.sourceName}` }, async (tx, txId, events) => {
      const row = await insertSeriesRow(tx, txId, { id, sourceName: input.sourceName, valueType: input.valueType, enumSetId: input.enumSet?.id ?? null, writableClass, createdNs: nowNs() });
      if (!row) {
        raced = await seriesBySourceName(tx, input.sourceName);
        if (!reuse || !raced) throw new ServiceError('name-conflict', `source_name: a series named ${input.sourceName} already exists`, { field: 'source_name', series: raced?.id ?? null });
        return null;
      }
      await this.store.createSeries({ id, type: input.valueType, enumSet: input.enumSet, writableClass });
      events.emit('series', id, 'created', { source_name: input.sourceName, value_type: input.valueType, enum_set_id: input.enumSet?.id ?? null, writable_class: writableClass });
      return row;
    });
    if (committed.result) return { record: committed.result, created: true };
    return { record: this.sameType(raced as unknown as SeriesRecord, input), created: false };
  }

  /** Keeps a committed series' identity for later lookups by name. */
  private keep(found: SeriesIdentity): void {
    if (this.identities.size >= IDENTITIES_KEPT) this.identities.clear();
    const { id, sourceName, valueType, enumSetId, createdTx, createdNs } = found;
    this.identities.set(sourceName, { id, sourceName, valueType, enumSetId, createdTx, createdNs });
  }

  private sameType<T extends SeriesIdentity>(found: T, input: CreateSeriesInput): T {
    if (found.valueType !== input.valueType) {
      throw new ServiceError('conflict', `series ${found.sourceName} exists with value type ${found.valueType}, not ${input.valueType}`, { series: found.id, value_type: found.valueType });
    }
    return found;
  }

  /** The record (cached; frozen, shared by every caller), or null. */
  get(id: string): Promise<SeriesRecord | null> {
    return this.lookups.record(id.toLowerCase());
  }

  /** The record, or 404 not-found naming the series. */
  async require(id: string): Promise<SeriesRecord> {
    const r = await this.get(id);
    if (!r) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
    return r;
  }

  list(filter: SeriesRowFilter): Promise<SeriesRecord[]> {
    return listSeriesRows(this.db, filter);
  }

  /** Owning asset through the current binding, else the staging root. */
  scopeOf(id: string): Promise<AccessTarget> {
    return this.lookups.scope(id.toLowerCase());
  }

  async setWritableClass(id: string, writableClass: string, who: Who): Promise<SeriesRecord> {
    checkWriterClass('writable_class', writableClass);
    const committed = await modelTransaction(this.db, { principal: who.principal, reason: who.reason ?? `set writable class of series ${id}` }, async (tx, txId, events) => {
      const before = await seriesById(tx, id);
      if (!before) throw new ServiceError('not-found', `series ${id} not found`, { series: id });
      const row = await updateWritableClassRow(tx, txId, id, writableClass);
      await this.store.setWritableClass(id, writableClass);
      events.emit('series', id, 'writable-class-changed', { from: before.writableClass, to: writableClass });
      return row as SeriesRecord;
    });
    return committed.result;
  }
}
