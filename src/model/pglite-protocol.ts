// Messages between the HTTP thread's Db (pglite-client.ts) and the embedded model's
// thread (pglite-thread.ts). Every request carries an id its reply repeats; `tx` 0 runs
// on the database, any other on that open transaction. Reply id 0 is the thread's
// start-up: PGlite opened, or why it did not.
export type DbRequest =
  | { op: 'query'; id: number; tx: number; text: string; params: unknown[] | undefined }
  | { op: 'exec'; id: number; tx: number; sql: string }
  | { op: 'begin'; id: number }
  | { op: 'end'; id: number; tx: number; commit: boolean }
  | { op: 'close'; id: number };

export interface WireResult { rows: Record<string, unknown>[]; rowCount: number }

/** A database error's fields that callers read (SQLSTATE code, constraint, ...), as plain data. */
export interface WireDbError {
  message: string;
  name?: string; code?: string; detail?: string; hint?: string; constraint?: string; table?: string;
  column?: string; schema?: string; severity?: string; where?: string; position?: string;
}

export type DbReply =
  | ({ id: number; ok: true; tx?: number } & WireResult)
  | { id: number; ok: false; error: WireDbError };
