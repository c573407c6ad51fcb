// The Node flags `npm start` gives the service (package.json's start script), for the
// benchmarks that spawn the service themselves, so they measure it as it runs
// (docs/decisions.md, "The service runs with two V8 helper threads").
export const SERVICE_NODE_FLAGS = ['--v8-pool-size=2', '--initial-old-space-size=128'];
