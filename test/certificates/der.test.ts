import { describe, expect, it } from '@jest/globals';
import {
  children,
  DerError,
  DerTag,
  parseDer,
  readOid,
  readString,
  readTime,
} from '../../src/shared/qwac/der.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');

describe('the DER reader', () => {
  it('reads long-form lengths', () => {
    const content = Buffer.alloc(300, 0x41);
    const node = parseDer(Buffer.concat([hex('04 82 01 2c'), content]));
    expect(node.tag).toBe(DerTag.OCTET_STRING);
    expect(node.value).toEqual(content);
  });

  it('decodes object identifiers, including the packed first arcs and arcs beyond 2^53', () => {
    expect(readOid(parseDer(hex('06 08 2b 06 01 05 05 07 01 03')))).toBe('1.3.6.1.5.5.7.1.3');
    expect(readOid(parseDer(hex('06 06 04 00 81 98 27 02')))).toBe('0.4.0.19495.2');
    expect(readOid(parseDer(hex('06 03 88 37 03')))).toBe('2.999.3');
    expect(readOid(parseDer(hex('06 0b 81 80 80 80 80 80 80 80 80 00 01')))).toBe(
      '2.9223372036854775728.1',
    );
  });

  it('walks SEQUENCE and SET children and decodes UTF8, Printable and IA5 strings', () => {
    const sequence = parseDer(hex('30 0f 0c 03 c3a96c 31 08 13 02 4752 16 02 6f6b'));
    const [utf8, set] = children(sequence);
    expect(readString(utf8)).toBe('él');
    expect(children(set).map(readString)).toEqual(['GR', 'ok']);
  });

  it('decodes UTCTime and GeneralizedTime', () => {
    expect(readTime(parseDer(Buffer.from('\x17\x0d491231235959Z', 'latin1')))).toEqual(
      new Date('2049-12-31T23:59:59Z'),
    );
    expect(readTime(parseDer(Buffer.from('\x17\x0d500101000000Z', 'latin1')))).toEqual(
      new Date('1950-01-01T00:00:00Z'),
    );
    expect(readTime(parseDer(Buffer.from('\x18\x0f20500101000000Z', 'latin1')))).toEqual(
      new Date('2050-01-01T00:00:00Z'),
    );
  });

  it.each([
    ['truncated contents', '04 05 00 00', /runs past the end/],
    ['a truncated header', '04', /truncated DER/],
    ['indefinite length', '30 80 00 00', /indefinite length/],
    ['a non-minimal long-form length', '04 81 05 0000000000', /non-minimal length/],
    ['a length with leading zero octets', '04 82 00 80', /non-minimal length/],
    ['a length of more than four octets', '04 85 0000000001 00', /too long/],
    ['trailing bytes', '05 00 00', /trailing byte/],
    ['a high tag number', '1f 81 00 00', /high tag numbers/],
  ])('refuses %s', (_, input, message) => {
    expect(() => parseDer(hex(input))).toThrow(DerError);
    expect(() => parseDer(hex(input))).toThrow(message);
  });

  it.each([
    ['an OID with a padded sub-identifier', '06 03 2b 80 01', /leading 0x80/],
    ['an OID ending mid sub-identifier', '06 02 2b 86', /ends inside a sub-identifier/],
    ['an empty OID', '06 00', /empty object identifier/],
    ['a non-OID where an OID is expected', '04 01 00', /expected tag 0x06, got 0x04/],
  ])('refuses %s', (_, input, message) => {
    expect(() => readOid(parseDer(hex(input)))).toThrow(message);
  });

  it('refuses invalid UTF-8, and a child that overruns its parent', () => {
    expect(() => readString(parseDer(hex('0c 02 c3 28')))).toThrow(/not valid text/);
    expect(() => children(parseDer(hex('30 03 04 05 00')))).toThrow(/runs past the end/);
  });
});
