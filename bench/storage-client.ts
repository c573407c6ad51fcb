// The HTTP side of bench/storage.ts, run as a second process so that the client's work
// is not charged to the service's event loop. Argument: one JSON object
// {url, rawSeries: uuid[], startNs, endNs, bigSeries, bigStartNs, bigEndNs, renders}.
// Prints one JSON object of figures on stdout.

interface Plan { url: string; rawSeries: string[]; startNs: string; endNs: string; bigSeries: string; bigStartNs: string; bigEndNs: string; renders: number }

const plan = JSON.parse(process.argv[2]) as Plan;
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

/** Reads a body fully, returns its bytes; points are known from the plan. */
async function get(url: string, accept: string): Promise<number> {
  const res = await fetch(url, { headers: { accept } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.arrayBuffer()).byteLength;
}

async function rawRate(accept: string, pointsPerSeries: number, concurrency: number): Promise<{ pointsPerS: number; bytes: number }> {
  const queue = [...plan.rawSeries];
  let bytes = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      bytes += await get(`${plan.url}/v1/series/${id}/raw?start_ns=${plan.startNs}&end_ns=${plan.endNs}&limit=1000000`, accept);
    }
  }));
  const s = (performance.now() - t0) / 1000;
  return { pointsPerS: (plan.rawSeries.length * pointsPerSeries) / s, bytes };
}

async function main() {
  const pointsPerSeries = Number(process.argv[3]);
  // warm-up: one read of each kind
  await get(`${plan.url}/v1/series/${plan.rawSeries[0]}/raw?start_ns=${plan.startNs}&end_ns=${plan.endNs}`, 'application/json');
  const json = await rawRate('application/json', pointsPerSeries, 2);
  const msgpack = await rawRate('application/x-msgpack', pointsPerSeries, 2);
  const bigJson = await (async () => {
    const t0 = performance.now();
    const bytes = await get(`${plan.url}/v1/series/${plan.bigSeries}/raw?start_ns=${plan.bigStartNs}&end_ns=${plan.bigEndNs}&limit=1000000`, 'application/x-msgpack');
    return { ms: performance.now() - t0, bytes };
  })();
  const render: number[] = [];
  for (let i = 0; i < plan.renders; i++) {
    const t0 = performance.now();
    await get(`${plan.url}/v1/series/${plan.bigSeries}/render?start_ns=${plan.bigStartNs}&end_ns=${plan.bigEndNs}&width=1000`, 'application/json');
    render.push(performance.now() - t0);
  }
  const rollups: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    await get(`${plan.url}/v1/series/${plan.rawSeries[i % plan.rawSeries.length]}/rollups?start_ns=${plan.startNs}&end_ns=${plan.endNs}&interval=1h`, 'application/json');
    rollups.push(performance.now() - t0);
  }
  process.stdout.write(JSON.stringify({
    raw_json_points_per_s: Math.round(json.pointsPerS), raw_json_bytes_per_point: json.bytes / (plan.rawSeries.length * pointsPerSeries),
    raw_msgpack_points_per_s: Math.round(msgpack.pointsPerS), raw_msgpack_bytes_per_point: msgpack.bytes / (plan.rawSeries.length * pointsPerSeries),
    raw_msgpack_1m_points_of_big_series_ms: Math.round(bigJson.ms),
    render_http_p50_ms: pct(render, 0.5), render_http_p99_ms: pct(render, 0.99),
    rollup_http_p50_ms: pct(rollups, 0.5), rollup_http_p99_ms: pct(rollups, 0.99),
  }));
}

main().catch((e) => { process.stderr.write(String(e?.stack ?? e) + '\n'); process.exit(1); });
