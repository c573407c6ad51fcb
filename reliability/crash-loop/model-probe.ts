// Model writes during the crash loop: an asset created over REST every few hundred ms. An
// asset whose creation was answered 200 is acknowledged and must exist after every later
// crash; one whose request died with the service is unknown and may or may not exist.
import { sleep } from './service-child.js';

interface ProbeAsset { id: string; name: string }

export class ModelProbe {
  private readonly acked: ProbeAsset[] = [];
  private taken = 0;
  private running = false;
  private loop: Promise<void> | null = null;
  readonly missing: string[] = [];

  constructor(private readonly url: () => string, private readonly everyMs = 300) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      for (let n = 1; this.running; n++) {
        const name = `crash-probe-${n}`;
        try {
          const res = await fetch(`${this.url()}/v1/model/assets`, {
            method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, reason: 'crash loop model probe' }), signal: AbortSignal.timeout(10_000),
          });
          if (res.status === 200) this.acked.push({ id: ((await res.json()) as { asset_id: string }).asset_id, name });
          else await res.arrayBuffer();
        } catch {
          // The service is down or died mid-request: the outcome is unknown, nothing to record.
        }
        await sleep(this.everyMs);
      }
    })();
  }

  stop(): void {
    this.running = false;
  }

  /** Assets acknowledged since the last call. */
  takeAcknowledged(): ProbeAsset[] {
    const out = this.acked.slice(this.taken);
    this.taken = this.acked.length;
    return out;
  }

  all(): ProbeAsset[] {
    return this.acked.slice();
  }

  acknowledgedCount(): number {
    return this.acked.length;
  }

  /** Every asset listed must read back with its name. */
  async check(assets: ProbeAsset[], when: string): Promise<void> {
    for (const a of assets) {
      let answer: { status: number; name: string | null } | null = null;
      for (let attempt = 1; attempt <= 4 && answer === null; attempt++) {
        try {
          const res = await fetch(`${this.url()}/v1/model/assets/${a.id}`, { signal: AbortSignal.timeout(30_000) });
          answer = { status: res.status, name: res.status === 200 ? ((await res.json()) as { name: string }).name : null };
        } catch {
          // A just-restarted service on a loaded box may not answer in time: ask again.
        }
      }
      if (!answer || answer.name !== a.name) this.missing.push(`${when}: asset ${a.name} (${a.id}) acknowledged, read ${answer ? `${answer.status}${answer.name ? ` name ${answer.name}` : ''}` : 'no answer'}`);
    }
  }
}
