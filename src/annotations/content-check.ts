// The declared Content-Type of an upload checked against its bytes, as they stream by:
// binary types by their magic numbers, text by being valid UTF-8 (a browser told nosniff
// renders text/plain as text, so the worst a hostile "text" file can be is odd text).
// Types outside ACCEPTED_TYPES are refused (415): an HTML or SVG upload could script the
// service's origin if it were ever served inline.
import { TextDecoder } from 'node:util';
import { ServiceError } from '../errors.js';

type Magic = { offset: number; bytes: number[] }[];

const MAGIC: Record<string, Magic> = {
  'image/png': [{ offset: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] }],
  'image/jpeg': [{ offset: 0, bytes: [0xff, 0xd8, 0xff] }],
  'image/gif': [{ offset: 0, bytes: [0x47, 0x49, 0x46, 0x38] }],
  // RIFF....WEBP
  'image/webp': [{ offset: 0, bytes: [0x52, 0x49, 0x46, 0x46] }, { offset: 8, bytes: [0x57, 0x45, 0x42, 0x50] }],
  'application/pdf': [{ offset: 0, bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }],
  'application/zip': [{ offset: 0, bytes: [0x50, 0x4b, 0x03, 0x04] }],
};
const TEXT = new Set(['text/plain', 'text/csv', 'application/json']);
/** Accepted without a check of the bytes: declares nothing about them, and is never shown inline. */
const OPAQUE = 'application/octet-stream';

export const ACCEPTED_TYPES = [...Object.keys(MAGIC), ...TEXT, OPAQUE];

/** Shown in the browser (Content-Disposition: inline); everything else downloads. */
export const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain']);

/** The media type of a Content-Type header, lower case, or a 415 when it is not accepted. */
export function acceptedType(header: string | undefined): string {
  const type = (header ?? '').split(';')[0].trim().toLowerCase();
  if (!ACCEPTED_TYPES.includes(type)) {
    throw new ServiceError('unsupported-media-type', `content-type: ${type || 'none'} is not accepted for attachments; accepted: ${ACCEPTED_TYPES.join(', ')}`, { accepted: ACCEPTED_TYPES });
  }
  return type;
}

/** Feeds on the upload's chunks; `check` throws attachment-type-mismatch when the bytes are not the declared type. */
export class ContentCheck {
  private head = Buffer.alloc(0);
  /** fatal: a malformed sequence throws; stream: a sequence cut between chunks is carried over. */
  private readonly decoder: TextDecoder | null;
  private badText = false;

  constructor(readonly declared: string) {
    this.decoder = TEXT.has(declared) ? new TextDecoder('utf-8', { fatal: true }) : null;
  }

  update(chunk: Buffer): void {
    if (this.head.length < 16) this.head = Buffer.concat([this.head, chunk.subarray(0, 16 - this.head.length)]);
    if (this.decoder && !this.badText) {
      try { this.decoder.decode(chunk, { stream: true }); } catch { this.badText = true; }
    }
  }

  /** Throws unless the bytes seen are of the declared type; early, once the head is known, when they cannot be. */
  check(final: boolean): void {
    const magic = MAGIC[this.declared];
    if (magic && (final || this.head.length >= 16)) {
      const ok = magic.every((m) => m.bytes.every((b, i) => this.head[m.offset + i] === b));
      if (!ok) throw this.mismatch('its first bytes are not the magic number of that type');
    }
    if (this.decoder) {
      if (!this.badText && final) {
        try { this.decoder.decode(); } catch { this.badText = true; }
      }
      if (this.badText) throw this.mismatch('it is not valid UTF-8 text');
    }
  }

  private mismatch(why: string): ServiceError {
    return new ServiceError('attachment-type-mismatch', `the attachment was declared ${this.declared} but ${why}`, { declared: this.declared });
  }
}
