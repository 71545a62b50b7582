/**
 * A small, strict DER reader: enough to walk a certificate to its extensions and decode them.
 * Anything that is not valid DER (indefinite or non-minimal lengths, truncation, trailing bytes)
 * is refused with a DerError rather than guessed at.
 */

export class DerError extends Error {
  override name = 'DerError';
}

/** Identifier octets of the universal types this reader decodes. */
export const DerTag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8String: 0x0c,
  PrintableString: 0x13,
  TeletexString: 0x14,
  IA5String: 0x16,
  UTCTime: 0x17,
  GeneralizedTime: 0x18,
  VisibleString: 0x1a,
  BMPString: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** The identifier octet of a context-specific tag such as `[3]`. */
export function contextTag(tagNumber: number, constructed: boolean): number {
  return 0x80 | (constructed ? 0x20 : 0) | tagNumber;
}

export interface DerNode {
  /** The identifier octet: class, constructed bit and tag number together. */
  tag: number;
  constructed: boolean;
  /** Where the TLV starts in the buffer it was read from. */
  offset: number;
  /** The whole TLV, header included. */
  encoded: Buffer;
  /** The contents octets. */
  value: Buffer;
}

const MAX_LENGTH_OCTETS = 4;

/** Reads one TLV at `offset`; `end` bounds it (the end of the enclosing value). */
export function readTlv(input: Buffer, offset = 0, end = input.length): DerNode {
  let cursor = offset;
  const byte = (): number => {
    if (cursor >= end) throw new DerError(`truncated DER at byte ${cursor}`);
    return input[cursor++];
  };
  const tag = byte();
  if ((tag & 0x1f) === 0x1f)
    throw new DerError(`high tag numbers are not supported (byte ${offset})`);
  const first = byte();
  let length = first;
  if (first === 0x80) throw new DerError(`indefinite length is not DER (byte ${offset})`);
  if (first > 0x80) {
    const count = first & 0x7f;
    if (count > MAX_LENGTH_OCTETS)
      throw new DerError(`length of ${count} octets is too long (byte ${offset})`);
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + byte();
    if (length < 0x80 || length < 256 ** (count - 1))
      throw new DerError(`non-minimal length encoding (byte ${offset})`);
  }
  const valueStart = cursor;
  if (length > end - valueStart) {
    throw new DerError(
      `length ${length} at byte ${offset} runs past the end of its container (${end - valueStart} bytes left)`,
    );
  }
  return {
    tag,
    constructed: (tag & 0x20) !== 0,
    offset,
    encoded: input.subarray(offset, valueStart + length),
    value: input.subarray(valueStart, valueStart + length),
  };
}

/** Reads a buffer that must hold exactly one TLV. */
export function parseDer(input: Buffer): DerNode {
  const node = readTlv(input, 0);
  if (node.encoded.length !== input.length) {
    throw new DerError(
      `${input.length - node.encoded.length} trailing byte(s) after the DER value`,
    );
  }
  return node;
}

/** Throws unless the node is there; readers take `undefined` so that a missing field gives a DerError, not a TypeError. */
export function required(node: DerNode | undefined, what: string): DerNode {
  if (!node) throw new DerError(`${what} is missing`);
  return node;
}

/** The TLVs inside a constructed node (SEQUENCE, SET, explicit context tag). */
export function children(maybeNode: DerNode | undefined): DerNode[] {
  const node = required(maybeNode, 'constructed value');
  if (!node.constructed)
    throw new DerError(`expected a constructed value, got tag 0x${hex(node.tag)}`);
  const result: DerNode[] = [];
  let offset = 0;
  while (offset < node.value.length) {
    const child = readTlv(node.value, offset);
    result.push(child);
    offset += child.encoded.length;
  }
  return result;
}

/** Throws unless the node has the tag; `what` names the field for the message. */
export function expectTag(node: DerNode | undefined, tag: number, what: string): DerNode {
  const present = required(node, what);
  if (present.tag !== tag)
    throw new DerError(`${what}: expected tag 0x${hex(tag)}, got 0x${hex(present.tag)}`);
  return present;
}

/** The dotted form of an OBJECT IDENTIFIER, e.g. "1.3.6.1.5.5.7.1.3". */
export function readOid(node: DerNode | undefined): string {
  const bytes = expectTag(node, DerTag.OID, 'object identifier').value;
  if (bytes.length === 0) throw new DerError('empty object identifier');
  if (bytes[bytes.length - 1] & 0x80)
    throw new DerError('object identifier ends inside a sub-identifier');
  const arcs: bigint[] = [];
  let current = 0n;
  let startOfArc = true;
  for (const b of bytes) {
    if (startOfArc && b === 0x80)
      throw new DerError('object identifier sub-identifier has a leading 0x80 (not minimal)');
    current = (current << 7n) | BigInt(b & 0x7f);
    startOfArc = (b & 0x80) === 0;
    if (startOfArc) {
      arcs.push(current);
      current = 0n;
    }
  }
  // The first sub-identifier packs the first two arcs as 40 * first + second.
  const head = arcs[0];
  const first = head < 80n ? head / 40n : 2n;
  const rest = [first, head - first * 40n, ...arcs.slice(1)];
  return rest.join('.');
}

const TEXT_DECODERS: Record<number, (bytes: Buffer) => string> = {
  [DerTag.UTF8String]: (bytes) => new TextDecoder('utf-8', { fatal: true }).decode(bytes),
  [DerTag.PrintableString]: ascii,
  [DerTag.IA5String]: ascii,
  [DerTag.VisibleString]: ascii,
  // T.61 is in practice used for Latin-1 text.
  [DerTag.TeletexString]: (bytes) => bytes.toString('latin1'),
  [DerTag.BMPString]: (bytes) => {
    if (bytes.length % 2 !== 0) throw new DerError('BMPString of odd length');
    return Buffer.from(bytes).swap16().toString('utf16le');
  },
};

/** The text of a string type (UTF8String, PrintableString, IA5String and the rarer ones found in names). */
export function readString(maybeNode: DerNode | undefined): string {
  const node = required(maybeNode, 'string');
  const decode = TEXT_DECODERS[node.tag];
  if (!decode) throw new DerError(`expected a string, got tag 0x${hex(node.tag)}`);
  try {
    return decode(node.value);
  } catch (error) {
    if (error instanceof DerError) throw error;
    throw new DerError(`string with tag 0x${hex(node.tag)} is not valid text`);
  }
}

export function readOctetString(node: DerNode | undefined): Buffer {
  return expectTag(node, DerTag.OCTET_STRING, 'octet string').value;
}

export function readBoolean(node: DerNode | undefined): boolean {
  const value = expectTag(node, DerTag.BOOLEAN, 'boolean').value;
  if (value.length !== 1 || (value[0] !== 0 && value[0] !== 0xff))
    throw new DerError('boolean is not DER (must be 0x00 or 0xff)');
  return value[0] === 0xff;
}

/** UTCTime or GeneralizedTime in their DER forms (UTC, with seconds, `Z`). */
export function readTime(maybeNode: DerNode | undefined): Date {
  const node = required(maybeNode, 'time');
  const text = node.value.toString('latin1');
  const match =
    node.tag === DerTag.UTCTime
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : node.tag === DerTag.GeneralizedTime
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
        : null;
  if (!match)
    throw new DerError(
      `expected a DER UTCTime or GeneralizedTime, got tag 0x${hex(node.tag)} "${text}"`,
    );
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  // RFC 5280: two-digit years 50-99 are 19xx.
  const fullYear = node.tag === DerTag.UTCTime ? (year >= 50 ? 1900 + year : 2000 + year) : year;
  const date = new Date(Date.UTC(fullYear, month - 1, day, hour, minute, second));
  if (
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw new DerError(`invalid date "${text}"`);
  }
  return date;
}

function ascii(bytes: Buffer): string {
  if (bytes.some((b) => b > 0x7f)) throw new DerError('non-ASCII byte in an ASCII string type');
  return bytes.toString('latin1');
}

function hex(tag: number): string {
  return tag.toString(16).padStart(2, '0');
}
