import { createHash, verify } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { basename } from 'node:path';
import type { ChainedKind } from './audit-chain.entity.js';
import type { AuditPublicKey } from './audit-signing-key.js';
import { checkpointStatement, linkHash } from './chain-hash.js';

/**
 * The archive of a closed month (docs/audit-and-webhooks.md, The archive of a month): gzip-compressed
 * JSON Lines, one JSON object a line, in this order: a header, a line per link with the row it seals
 * (each checkpoint's line right after the link it signs), a trailer. Checked without Portico's
 * database: the row hashes, the links' hashes from line to line, the checkpoints' signatures and the
 * trailer's sha256 of every line before it.
 */
export const ARCHIVE_FORMAT = 'portico-audit-archive/v1';

export const archiveFileName = (month: string) => `portico-audit-${month}.jsonl.gz`;

export interface ArchiveHeader {
  type: 'header';
  format: typeof ARCHIVE_FORMAT;
  /** `YYYY-MM` (UTC). */
  month: string;
  /** Every tenant's rows: the chain is one for all of them. */
  tenants: 'all';
  /** Its first link: the previous archive's last plus one. */
  firstSeq: string;
  /** Its last link: a signed checkpoint's (firstSeq - 1 when the month holds no link). */
  lastSeq: string;
  /** The chain hash of link firstSeq - 1 (64 zeros before the first link). */
  previousHash: string;
}

export interface ArchiveLink {
  type: 'link';
  seq: string;
  kind: ChainedKind;
  id: string;
  /** The row's date (its month), UTC. */
  at: string;
  tenant: string;
  rowHash: string;
  chainHash: string;
  sealedAt: string;
  /** The row's canonical JSON text exactly as hashed (sha256 of it is rowHash): parse it to read the row. */
  row: string;
}

export interface ArchiveCheckpoint {
  type: 'checkpoint';
  seq: string;
  chainHash: string;
  signedAt: string;
  keyId: string;
  signature: string;
}

export interface ArchiveTrailer {
  type: 'trailer';
  links: number;
  accessLog: number;
  statusChanges: number;
  checkpoints: number;
  /** sha256 (hex) of every line before the trailer, newlines included, uncompressed. */
  sha256: string;
}

type ArchiveLine = ArchiveHeader | ArchiveLink | ArchiveCheckpoint | ArchiveTrailer;

/**
 * Writes an archive's lines to `path` gzip-compressed, keeping the counts and the content's sha256 for
 * the trailer; `end()` writes the trailer, flushes and syncs the file.
 */
export class ArchiveWriter {
  private readonly gzip = createGzip({ level: 6 });
  private readonly file;
  private readonly content = createHash('sha256');
  private readonly counts = { links: 0, accessLog: 0, statusChanges: 0, checkpoints: 0 };

  constructor(path: string) {
    this.file = createWriteStream(path, { flags: 'wx', mode: 0o640 });
    this.gzip.pipe(this.file);
  }

  async write(line: ArchiveHeader | ArchiveLink | ArchiveCheckpoint): Promise<void> {
    if (line.type === 'link') {
      this.counts.links++;
      if (line.kind === 'access_log') this.counts.accessLog++;
      else this.counts.statusChanges++;
    } else if (line.type === 'checkpoint') this.counts.checkpoints++;
    const text = `${JSON.stringify(line)}\n`;
    this.content.update(text);
    if (!this.gzip.write(text)) await once(this.gzip, 'drain');
  }

  /** Writes the trailer and closes the file once its bytes are on disk; the trailer's counts. */
  async end(): Promise<ArchiveTrailer> {
    const trailer: ArchiveTrailer = {
      type: 'trailer',
      ...this.counts,
      sha256: this.content.digest('hex'),
    };
    this.gzip.end(`${JSON.stringify(trailer)}\n`);
    await finished(this.file);
    return trailer;
  }

  /** Abandons the file (its temporary name stays until removed). */
  destroy(): void {
    this.gzip.destroy();
    this.file.destroy();
  }
}

export type ArchiveProblem =
  | 'unreadable'
  | 'not-an-archive'
  | 'truncated'
  | 'gap'
  | 'reordered'
  | 'row-edited'
  | 'link-altered'
  | 'checkpoint-mismatch'
  | 'checkpoint-signature'
  | 'checkpoint-unknown-key'
  | 'checkpoint-missing'
  | 'trailer-mismatch'
  | 'missing-month'
  | 'duplicate-month'
  | 'join-mismatch'
  | 'unarchived-cut';

export interface ArchiveBreak {
  problem: ArchiveProblem;
  file?: string;
  /** 1-based line of the uncompressed file. */
  line?: number;
  seq?: string;
  month?: string;
  detail: string;
}

export interface ArchiveSummary {
  file: string;
  month: string;
  firstSeq: string;
  lastSeq: string;
  previousHash: string;
  /** The chain hash of lastSeq (previousHash when empty). */
  lastHash: string;
  links: number;
  /** sha256 (hex) of the file's bytes. */
  sha256: string;
  /** Each checkpoint it holds: the chain hash at its link. */
  checkpoints: { seq: string; chainHash: string }[];
}

export interface ArchiveFileReport {
  summary: ArchiveSummary | null;
  firstBreak: ArchiveBreak | null;
}

const isHex64 = (value: unknown) => typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

/**
 * Reads one archive through and checks it alone: the header, each line's row hash and link hash from
 * the previous line's, the numbering (a line missing: `gap`; out of place: `reordered`), each
 * checkpoint's link hash and signature by a trusted key, a checkpoint at the last link, the trailer's
 * counts and sha256. The first break names its line.
 */
export async function verifyArchiveFile(
  path: string,
  trusted: Map<string, AuditPublicKey>,
): Promise<ArchiveFileReport> {
  const file = basename(path);
  const content = createHash('sha256');
  const raw = createReadStream(path);
  const tee = new PassThrough();
  raw.on('error', (error) => tee.destroy(error));
  const gunzip = createGunzip();
  raw.pipe(gunzip).pipe(tee);
  gunzip.on('error', (error) => tee.destroy(error));
  const lines = createInterface({ input: tee, crlfDelay: Infinity });

  let header: ArchiveHeader | undefined;
  let trailer: ArchiveTrailer | undefined;
  let trailerLine = 0;
  let lineNo = 0;
  let expected = 0n;
  let previous = '';
  let lastLinkSeq: bigint | undefined;
  const counts = { links: 0, accessLog: 0, statusChanges: 0, checkpoints: 0 };
  const checkpoints: ArchiveSummary['checkpoints'] = [];
  let firstBreak: ArchiveBreak | null = null;
  // A line out of number: a gap, unless the link it should have been turns up later (reordered).
  let outOfPlace: { line: number; expected: bigint; seq: string; later?: boolean } | undefined;
  const fail = (problem: ArchiveProblem, detail: string, seq?: string) => {
    firstBreak ??= { problem, file, line: lineNo, ...(seq ? { seq } : {}), detail };
  };
  try {
    for await (const text of lines) {
      lineNo++;
      if (outOfPlace) {
        if (text.includes(`"seq":"${outOfPlace.expected}"`)) {
          const parsed = JSON.parse(text) as ArchiveLine;
          if (parsed.type === 'link' && BigInt(parsed.seq) === outOfPlace.expected) {
            outOfPlace.later = true;
            break;
          }
        }
        continue;
      }
      if (firstBreak) break;
      if (trailer) {
        fail('not-an-archive', 'a line after the trailer');
        break;
      }
      let line: ArchiveLine;
      try {
        line = JSON.parse(text) as ArchiveLine;
      } catch {
        fail('not-an-archive', 'the line is not JSON');
        break;
      }
      if (!header) {
        if (
          line.type !== 'header' ||
          line.format !== ARCHIVE_FORMAT ||
          !isHex64(line.previousHash)
        ) {
          fail('not-an-archive', `the first line is not a ${ARCHIVE_FORMAT} header`);
          break;
        }
        header = line;
        expected = BigInt(line.firstSeq);
        previous = line.previousHash;
        content.update(`${text}\n`);
        continue;
      }
      if (line.type === 'trailer') {
        trailer = line;
        trailerLine = lineNo;
        continue;
      }
      content.update(`${text}\n`);
      if (line.type === 'link') {
        const seq = BigInt(line.seq);
        if (seq !== expected) {
          if (seq < expected)
            fail('reordered', `link ${line.seq} comes after link ${expected - 1n}`, line.seq);
          else outOfPlace = { line: lineNo, expected, seq: line.seq };
          continue;
        }
        counts.links++;
        if (line.kind === 'access_log') counts.accessLog++;
        else counts.statusChanges++;
        if (createHash('sha256').update(line.row).digest('hex') !== line.rowHash) {
          fail('row-edited', `${line.kind} ${line.id} differs from what was sealed`, line.seq);
          continue;
        }
        const row = parseRow(line.row);
        if (String(row?.id) !== line.id || row?.tenant_id !== line.tenant) {
          fail(
            'link-altered',
            `link ${line.seq} names another row or tenant than its row's`,
            line.seq,
          );
          continue;
        }
        const hash = linkHash(previous, line.seq, line.kind, line.id, line.rowHash);
        if (hash !== line.chainHash) {
          fail(
            'link-altered',
            `the hash of link ${line.seq} does not follow from the link before it`,
            line.seq,
          );
          continue;
        }
        previous = hash;
        lastLinkSeq = seq;
        expected = seq + 1n;
      } else if (line.type === 'checkpoint') {
        counts.checkpoints++;
        if (line.seq !== String(lastLinkSeq) || line.chainHash !== previous) {
          fail(
            'checkpoint-mismatch',
            `checkpoint ${line.seq} does not sign the link before it (${lastLinkSeq ?? 'none'})`,
            line.seq,
          );
          continue;
        }
        const key = trusted.get(line.keyId);
        if (!key) {
          fail(
            'checkpoint-unknown-key',
            `checkpoint ${line.seq} names key ${line.keyId}, which is not trusted (${[...trusted.keys()].join(', ') || 'none'})`,
            line.seq,
          );
          continue;
        }
        const statement = checkpointStatement(line.seq, line.chainHash, new Date(line.signedAt));
        if (
          !verify(
            null,
            Buffer.from(statement),
            key.publicKey,
            Buffer.from(line.signature, 'base64'),
          )
        ) {
          fail(
            'checkpoint-signature',
            `checkpoint ${line.seq} is not signed by key ${line.keyId}`,
            line.seq,
          );
          continue;
        }
        checkpoints.push({ seq: line.seq, chainHash: line.chainHash });
      } else {
        fail('not-an-archive', `a second header`);
      }
    }
  } catch (error) {
    return {
      summary: null,
      firstBreak: {
        problem: 'unreadable',
        file,
        line: lineNo,
        detail: `the file cannot be read through (${(error as Error).message})`,
      },
    };
  }
  raw.destroy();
  if (outOfPlace) {
    lineNo = outOfPlace.line;
    const reordered = outOfPlace.later === true;
    fail(
      reordered ? 'reordered' : 'gap',
      reordered
        ? `link ${outOfPlace.seq} is where link ${outOfPlace.expected} should be: the lines were reordered`
        : `link ${outOfPlace.expected} is missing; the next is ${outOfPlace.seq}`,
      outOfPlace.seq,
    );
  }
  if (!firstBreak && !header) fail('not-an-archive', 'the file is empty');
  if (!firstBreak && header) {
    const h = header as ArchiveHeader;
    const last = BigInt(h.lastSeq);
    if (!trailer) fail('truncated', 'the file ends without its trailer: cut short?');
    else if (expected - 1n !== last)
      fail(
        'gap',
        `the header says the last link is ${h.lastSeq}; the file ends at ${expected - 1n}`,
      );
    else if (last >= BigInt(h.firstSeq) && checkpoints.at(-1)?.seq !== h.lastSeq)
      fail('checkpoint-missing', `no signed checkpoint covers the last link ${h.lastSeq}`);
    else {
      const t = trailer as ArchiveTrailer;
      const sha = content.digest('hex');
      if (
        t.sha256 !== sha ||
        t.links !== counts.links ||
        t.accessLog !== counts.accessLog ||
        t.statusChanges !== counts.statusChanges ||
        t.checkpoints !== counts.checkpoints
      ) {
        lineNo = trailerLine;
        fail(
          'trailer-mismatch',
          `the trailer's counts or sha256 are not those of the lines before it`,
        );
      }
    }
  }
  if (firstBreak || !header) return { summary: null, firstBreak };
  const h = header as ArchiveHeader;
  return {
    firstBreak: null,
    summary: {
      file,
      month: h.month,
      firstSeq: h.firstSeq,
      lastSeq: h.lastSeq,
      previousHash: h.previousHash,
      lastHash: previous,
      links: counts.links,
      sha256: await fileSha256(path),
      checkpoints,
    },
  };
}

/** A link line's row, or undefined when its text is not a JSON object. */
function parseRow(text: string): { id?: unknown; tenant_id?: unknown } | undefined {
  try {
    const row: unknown = JSON.parse(text);
    return typeof row === 'object' && row !== null ? row : undefined;
  } catch {
    return undefined;
  }
}

/** sha256 (hex) of a file's bytes. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The month (`YYYY-MM`) after one. */
export const nextMonth = (month: string) => {
  const [y, m] = month.split('-').map(Number);
  const d = new Date(Date.UTC(y!, m!, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

export interface ArchivesReport {
  ok: boolean;
  archives: ArchiveSummary[];
  /** The last archived link and its hash. */
  head: { seq: string; chainHash: string } | null;
  firstBreak: ArchiveBreak | null;
}

/**
 * Checks archives alone, each through, then together in month order: no month missing between two,
 * and each starting where the one before ended (its first link the next number, its previous hash
 * that link's).
 */
export async function verifyArchives(
  paths: string[],
  trusted: Map<string, AuditPublicKey>,
): Promise<ArchivesReport> {
  const archives: ArchiveSummary[] = [];
  const fail = (firstBreak: ArchiveBreak): ArchivesReport => ({
    ok: false,
    archives,
    head: null,
    firstBreak,
  });
  for (const path of paths) {
    const { summary, firstBreak } = await verifyArchiveFile(path, trusted);
    if (firstBreak) return fail(firstBreak);
    archives.push(summary!);
  }
  archives.sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
  for (let i = 1; i < archives.length; i++) {
    const [before, after] = [archives[i - 1]!, archives[i]!];
    if (before.month === after.month)
      return fail({
        problem: 'duplicate-month',
        file: after.file,
        month: after.month,
        detail: `${before.file} and ${after.file} both archive ${after.month}`,
      });
    if (nextMonth(before.month) !== after.month)
      return fail({
        problem: 'missing-month',
        file: after.file,
        month: nextMonth(before.month),
        detail: `no archive of ${nextMonth(before.month)} between ${before.file} and ${after.file}`,
      });
    if (
      BigInt(after.firstSeq) !== BigInt(before.lastSeq) + 1n ||
      after.previousHash !== before.lastHash
    )
      return fail({
        problem: 'gap',
        file: after.file,
        line: 1,
        seq: after.firstSeq,
        detail: `${after.file} starts at link ${after.firstSeq} after hash ${after.previousHash.slice(0, 12)}…; ${before.file} ends at link ${before.lastSeq} with hash ${before.lastHash.slice(0, 12)}…`,
      });
  }
  const last = archives.at(-1);
  return {
    ok: true,
    archives,
    head: last ? { seq: last.lastSeq, chainHash: last.lastHash } : null,
    firstBreak: null,
  };
}
