import { describe, expect, it } from 'vitest';
import { AsciiBuffer } from './ascii-buffer.ts';

const text = (buffer: AsciiBuffer) => Buffer.from(buffer.contents()).toString('latin1');

describe('AsciiBuffer', () => {
  it('appends text, bytes and copies, growing when needed', () => {
    const buffer = new AsciiBuffer(4);
    buffer.text('42\t');
    buffer.byte(9);
    buffer.copy(Buffer.from('x-1.25y'), 1, 6);
    buffer.all(Buffer.from('\tend'));
    expect(text(buffer)).toBe('42\t\t-1.25\tend');
    expect(buffer.bytes.length).toBeGreaterThanOrEqual(buffer.length);
  });

  it('hands out a copy that later writes do not change, and resets for reuse', () => {
    const buffer = new AsciiBuffer(16);
    buffer.text('first');
    const taken = buffer.take();
    buffer.reset();
    buffer.text('other');
    expect(Buffer.from(taken).toString('latin1')).toBe('first');
    expect(text(buffer)).toBe('other');
  });
});
