// The ingest core's view of one gRPC call: send a server message, stop or resume reading,
// end with a status. grpc-server.ts implements it over a grpc-js duplex stream, so the
// session logic never touches grpc-js.

export type EndStatus = 'unauthenticated' | 'permission-denied' | 'failed-precondition' | 'invalid-argument'
  | 'deadline-exceeded' | 'unavailable' | 'resource-exhausted' | 'ok';

/** Messages as proto-loader encodes them: int64 fields as decimal strings. */
export type ServerMessage =
  | { welcome: Record<string, unknown> }
  | { ack: { lane: string; acked_through: string; points: string } }
  | { credit: { lane: string; points: string; available: string } }
  | { rejected: { lane: string; seq: string; stream: number; reason: string; detail: string; retryable: boolean; expected_seq: string } }
  | { points_refused: { lane: string; seq: string; stream: number; refused: number; refusals: Array<{ index: number; reason: string }> } }
  | { over_credit: { lane: string; seq: string; sent_points: string; available: string } }
  | { fence: { superseding_epoch: string; streams: number[]; reason: string } }
  | { heartbeat: { sent_ns: string } }
  | { watermark_applied: { stream: number; through_ns: string } };

export interface SessionLink {
  readonly peer: string;
  send(msg: ServerMessage): void;
  pause(): void;
  resume(): void;
  end(status: EndStatus, message: string): void;
}
