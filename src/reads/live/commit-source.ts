// What live subscriptions need from ingest: the commit feed of watched series. The ingest
// host (src/ingest/ingest-host.ts) provides it; the composition root (src/service.ts)
// hands it to the hub, so this layer never imports the ingest front end above it.

/** The durable points of one series in one group commit (ingest's CommittedColumns). */
export interface LiveColumns {
  series: string;
  times: BigInt64Array;
  values: Float64Array | BigInt64Array | Uint8Array | Int32Array | unknown[];
  quality: Uint32Array;
}

export interface LiveGroup {
  seq: number;
  /** When the group became durable (absolute ms). */
  durableMs: number;
  columns: LiveColumns[];
}

export interface CommitSource {
  /** Durable groups of the watched series, in commit order; returns the unsubscribe function. */
  onCommits(listener: (group: LiveGroup) => void): () => void;
  /**
   * Replaces the series one client watches (live updates, the calculation engine, episode
   * triggers: each its own set); groups carry the union of every client's set, so a client
   * ignores series it did not ask for. Resolves once the writer reports the new union.
   */
  watch(client: string, seriesIds: readonly string[]): Promise<void>;
}
