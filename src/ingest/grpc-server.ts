// The collector gRPC server (grpc-js is imported only here: the collector program speaks the
// same wire protocol over node:http2, src/collector/grpc-call.ts).
// One bidirectional call per session: the first message must be `open`; everything after
// it goes to the session. Flow control: a session that overdraws its credit is paused
// (the call stops reading, HTTP/2 windows close, the collector's writes back up) until
// its credit is positive again, so server memory stays bounded whatever collectors send.
// The messages sent and received per batch (batches in, acks and credit out) are read and
// written by hand; every other message goes through proto-loader.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { IngestCore, OpenRefused, type WireOpen } from './ingest-core.js';
import type { IngestSession } from './ingest-session.js';
import type { EndStatus, ServerMessage, SessionLink } from './session-link.js';
import type { WireBatch } from './batch-columns.js';
import { PROTO_OPTIONS, PROTO_PATH } from './collector-proto.js';
import { decodeBatchMessage } from './batch-message-decode.js';
import { encodeServerMessage } from './server-message-encode.js';

interface CollectorMessage {
  body?: 'open' | 'batch' | 'watermark' | 'heartbeat';
  open?: WireOpen;
  batch?: WireBatch;
  watermark?: { stream: number; through_ns: string };
  heartbeat?: { sent_ns: string };
}

const STATUS: Record<EndStatus, grpc.status> = {
  'ok': grpc.status.OK,
  'unauthenticated': grpc.status.UNAUTHENTICATED,
  'permission-denied': grpc.status.PERMISSION_DENIED,
  'failed-precondition': grpc.status.FAILED_PRECONDITION,
  'invalid-argument': grpc.status.INVALID_ARGUMENT,
  'deadline-exceeded': grpc.status.DEADLINE_EXCEEDED,
  'unavailable': grpc.status.UNAVAILABLE,
  'resource-exhausted': grpc.status.RESOURCE_EXHAUSTED,
};

export interface GrpcOptions {
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string; clientCaPem: string | null } | null;
  maxMessageBytes: number;
}

type Call = grpc.ServerDuplexStream<CollectorMessage, ServerMessage>;

function linkOf(call: Call): SessionLink & { ended: boolean } {
  const link = {
    peer: call.getPeer(),
    ended: false,
    send(msg: ServerMessage) { if (!link.ended && !call.cancelled) call.write(msg); },
    pause() { call.pause(); },
    resume() { call.resume(); },
    end(status: EndStatus, message: string) {
      if (link.ended) return;
      link.ended = true;
      if (status === 'ok') call.end();
      else call.emit('error', { code: STATUS[status], details: message });
    },
  };
  return link;
}

/** The SANs of a verified client certificate, "URI:..." and "DNS:..." entries. */
function clientSans(call: Call): string[] | null {
  const ctx = call.getAuthContext?.();
  const san = ctx?.sslPeerCertificate?.subjectaltname;
  if (!san) return null;
  return san.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

export async function startGrpcServer(core: IngestCore, opts: GrpcOptions, onError: (msg: string, fields: Record<string, unknown>) => void): Promise<{ port: number; stop(): Promise<void> }> {
  const def = protoLoader.loadSync(PROTO_PATH, PROTO_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { historian: { collector: { v1: { CollectorIngest: grpc.ServiceClientConstructor } } } };
  const server = new grpc.Server({
    'grpc.max_receive_message_length': opts.maxMessageBytes,
    // the welcome of a session declaring 100,000 streams is ~5 MB (more with refusals);
    // the collector client receives up to 64 MB
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_permit_without_calls': 1,
  });
  const calls = new Set<Call>();
  // Batches are read by hand (batch-message-decode.ts); every other message, and any batch
  // that reader does not take as plain, by proto-loader's generic decoder.
  const service = pkg.historian.collector.v1.CollectorIngest.service;
  const genericDecode = service.Session.requestDeserialize;
  const readMessage = (buf: Buffer): CollectorMessage => {
    const batch = decodeBatchMessage(buf);
    return batch !== null ? { body: 'batch', batch } : genericDecode(buf) as CollectorMessage;
  };
  // Acks and credit grants are written by hand (server-message-encode.ts), the rest generically.
  const genericEncode = service.Session.responseSerialize;
  const writeMessage = (m: ServerMessage): Buffer => encodeServerMessage(m) ?? genericEncode(m);

  server.addService({ ...service, Session: { ...service.Session, requestDeserialize: readMessage, responseSerialize: writeMessage } }, {
    Session: (call: Call) => {
      calls.add(call);
      const link = linkOf(call);
      let session: IngestSession | null = null;
      let opening = false;
      const bearerMd = call.metadata.get('authorization')[0];
      const bearer = typeof bearerMd === 'string' ? bearerMd : bearerMd ? bearerMd.toString('utf8') : null;

      call.on('data', (m: CollectorMessage) => {
        if (session) session.lastMessageMs = performance.now();
        if (!session) {
          if (opening) { link.end('failed-precondition', 'wait for the welcome before sending'); return; }
          if (m.body !== 'open' || !m.open) { link.end('failed-precondition', 'the first message of a session must be open'); return; }
          opening = true;
          core.open(link, m.open, { bearer, sans: clientSans(call) }).then(
            (s) => { if (link.ended || call.cancelled) core.closed(s); else session = s; },
            (e: unknown) => {
              if (e instanceof OpenRefused) link.end(e.status, e.message);
              else { onError('session open failed', { err: e instanceof Error ? e.message : String(e) }); link.end('unavailable', 'the server could not open the session; retry'); }
            },
          );
          return;
        }
        switch (m.body) {
          case 'batch': session.onBatch(m.batch as WireBatch); break;
          case 'heartbeat': link.send({ heartbeat: { sent_ns: process.hrtime.bigint().toString() } }); break;
          case 'watermark': {
            const s = session;
            core.watermark(s, m.watermark?.stream ?? 0, m.watermark?.through_ns ?? '0').catch((e: unknown) => onError('watermark failed', { err: e instanceof Error ? e.message : String(e) }));
            break;
          }
          case 'open': link.end('failed-precondition', 'open was already sent on this call'); break;
          default: link.end('invalid-argument', 'empty collector message');
        }
      });
      const done = () => {
        calls.delete(call);
        if (session) core.closed(session);
      };
      call.on('end', () => { done(); if (!link.ended) { link.ended = true; call.end(); } });
      call.on('cancelled', done);
      call.on('error', done);
    },
  });

  const creds = opts.tls
    ? grpc.ServerCredentials.createSsl(
      opts.tls.clientCaPem ? Buffer.from(opts.tls.clientCaPem) : null,
      [{ private_key: Buffer.from(opts.tls.keyPem), cert_chain: Buffer.from(opts.tls.certPem) }],
      opts.tls.clientCaPem !== null,
    )
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.host}:${opts.port}`, creds, (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  return {
    port,
    stop: () => new Promise<void>((resolve) => {
      // Stop accepting, let calls finish for a moment, then cut them.
      const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, 1_000);
      timer.unref();
      for (const c of calls) c.end();
      server.tryShutdown(() => { clearTimeout(timer); resolve(); });
    }),
  };
}
