// A piscina task that answers its input (test/workers/piscina-worker-views.test.ts).
export default (x) => x;
