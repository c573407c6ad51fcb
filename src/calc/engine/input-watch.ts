// Ingest reports the commits of one set of watched series (CommitSource.watch replaces the
// whole set), and live subscriptions (src/reads/live) already own that set. The engine
// needs its inputs reported too, so both go through one union: the host's watch method is
// wrapped so that whatever live subscriptions ask is sent together with the engine's
// inputs. The wrapper is installed once, on the ingest host instance, before either
// caller changes its set; nothing else of ingest changes.
//
// (A cleaner seam is a watch set per client inside the ingest host; that file belongs to
// ingest, so the union lives here until ingest offers it.)
import type { CommitSource } from '../../reads/live/commit-source.js';

export class InputWatch {
  private others: readonly string[] = [];
  private mine: readonly string[] = [];
  private readonly send: (ids: readonly string[]) => Promise<void>;
  private restore: (() => void) | null;

  constructor(private readonly source: CommitSource) {
    const original = source.watch.bind(source);
    this.send = original;
    const wrapped = (ids: readonly string[]): Promise<void> => {
      this.others = ids;
      return this.push();
    };
    source.watch = wrapped;
    this.restore = () => { if (source.watch === wrapped) source.watch = original; };
  }

  /** Replaces the engine's inputs; resolves once ingest reports them. */
  setInputs(ids: readonly string[]): Promise<void> {
    this.mine = ids;
    return this.push();
  }

  private push(): Promise<void> {
    if (this.mine.length === 0) return this.send(this.others);
    const all = new Set(this.others);
    for (const id of this.mine) all.add(id);
    return this.send([...all]);
  }

  close(): void {
    this.restore?.();
    this.restore = null;
    this.mine = [];
    void this.send(this.others).catch(() => undefined);
  }
}
