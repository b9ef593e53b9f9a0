import { describe, expect, it } from 'vitest';
import { CsvTextDecoder, decodeCsvBytes } from './encoding.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

function decodeInChunks(bytes: Uint8Array, size: number): { text: string; encoding: string } {
  const decoder = new CsvTextDecoder();
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += size) text += decoder.decode(bytes.subarray(offset, offset + size));
  text += decoder.end();
  return { text, encoding: decoder.encoding };
}

describe('CSV decoding', () => {
  it('decodes UTF-8 and strips a BOM', () => {
    expect(decodeCsvBytes(utf8('a,b\n°C,µ\n'))).toEqual({ text: 'a,b\n°C,µ\n', encoding: 'utf-8' });
    expect(decodeCsvBytes(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('x,y')]))).toEqual({ text: 'x,y', encoding: 'utf-8' });
  });

  it('falls back to Latin-1 when the bytes are not UTF-8', () => {
    const bytes = new Uint8Array([...utf8('T [') , 0xb0, ...utf8('C];x\r\n')]);
    expect(decodeCsvBytes(bytes)).toEqual({ text: 'T [°C];x\r\n', encoding: 'latin1' });
  });

  it("reads Latin-1 as Windows-1252, as browsers do: the euro, dashes and quotes Windows software writes at 0x80-0x9F", () => {
    // 'Cost [€]', 'pO2 – air', '‰' and curly quotes as a Windows program writes them, with a byte (0xB5, µ) that is not UTF-8.
    const bytes = new Uint8Array([...utf8('Cost ['), 0x80, ...utf8('];pO2 '), 0x96, ...utf8(' air;'), 0x89, ...utf8(';'), 0x93, ...utf8('x'), 0x94, ...utf8(';'), 0xb5, ...utf8('m\n')]);
    const decoded = decodeCsvBytes(bytes);
    expect(decoded).toEqual({ text: 'Cost [€];pO2 – air;‰;“x”;µm\n', encoding: 'latin1' });
    // The WHATWG index at its edges: the five bytes it leaves undefined keep their code point, 0xA0-0xFF are ISO-8859-1's.
    const all = Uint8Array.from({ length: 256 }, (_, byte) => byte);
    const text = decodeCsvBytes(all, { encoding: 'latin1' }).text;
    expect([text[0x80], text[0x81], text[0x8d], text[0x9f]]).toEqual(['€', '\u0081', '\u008d', 'Ÿ']);
    expect(text.slice(0xa0)).toBe(String.fromCharCode(...all.subarray(0xa0)));
    expect(text.slice(0, 0x80)).toBe(String.fromCharCode(...all.subarray(0, 0x80)));
  });

  it('decodes multi-byte characters split across every chunk size', () => {
    const text = 'time,temp °C,€,𝄞\n1,2,3,4\n';
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(text)]);
    for (let size = 1; size <= 8; size += 1) expect(decodeInChunks(bytes, size)).toEqual({ text, encoding: 'utf-8' });
  });

  it('switches to Latin-1 in the middle of a stream and keeps what came before', () => {
    const bytes = new Uint8Array([...utf8('abc,def\n'), 0xb0, 0x43, 0x0a]);
    for (let size = 1; size <= 5; size += 1) {
      expect(decodeInChunks(bytes, size)).toEqual({ text: 'abc,def\n°C\n', encoding: 'latin1' });
    }
  });

  it('drops a cut final character of a partial prefix instead of switching encoding', () => {
    const bytes = utf8('a,°');
    expect(decodeCsvBytes(bytes.subarray(0, bytes.length - 1), { partial: true })).toEqual({ text: 'a,', encoding: 'utf-8' });
    expect(decodeCsvBytes(new Uint8Array([0x61]))).toEqual({ text: 'a', encoding: 'utf-8' });
  });

  it('can be told the encoding, for a read resumed in the middle of a file', () => {
    const decoder = new CsvTextDecoder({ encoding: 'latin1' });
    expect(decoder.decode(new Uint8Array([0x33, 0x30, 0xb0, 0x43, 0x0a]))).toBe('30°C\n');
    expect(decoder.end()).toBe('');
    expect(decoder.encoding).toBe('latin1');
  });
});
