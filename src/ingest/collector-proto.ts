// The collector contract (proto/collector.proto) and the proto-loader options both ends load
// it with: the server (grpc-server.ts, over grpc-js) and our collector client
// (src/collector, over node:http2), which must not pull grpc-js in by importing the server.
import { fileURLToPath } from 'node:url';
import type * as protoLoader from '@grpc/proto-loader';

export const PROTO_PATH = fileURLToPath(new URL('../../proto/collector.proto', import.meta.url));

/** int64 as exact strings, enums by name, bytes as Buffer, defaults filled in. */
export const PROTO_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
