import { describe, expect, it } from 'vitest';
import { containsMaliciousContent, MaliciousContentScanner } from './malicious-content.ts';

describe('malicious content', () => {
  it.each([
    '<script>alert(1)</script>',
    'a,</SCRIPT>',
    'x,script',
    'link,JavaScript:alert(1)',
    'link,vbscript:msgbox',
    '<img onload=x>',
    '<img ONERROR = x>',
  ])('flags %s', (text) => {
    expect(containsMaliciousContent(text)).toBe(true);
  });

  it.each(['"Description";"Reference"', '"VesselScript="', 'transcript,subscript', 'time,value\n1,2', 'onloading'])(
    'does not flag ordinary text %s',
    (text) => {
      expect(containsMaliciousContent(text)).toBe(false);
    },
  );

  it('finds a pattern split across chunks at every position', () => {
    const text = 'time,value\n1,2\nlink,<a href="javascript:void(0)">\n3,4\n';
    for (let split = 1; split < text.length; split += 1) {
      const scanner = new MaliciousContentScanner();
      scanner.push(text.slice(0, split));
      expect(scanner.push(text.slice(split))).toBe(true);
    }
    for (let size = 1; size < 8; size += 1) {
      const scanner = new MaliciousContentScanner();
      for (let offset = 0; offset < text.length; offset += size) scanner.push(text.slice(offset, offset + size));
      expect(scanner.found).toBe(true);
    }
  });

  it('does not flag Description when chunks cut it before script', () => {
    const scanner = new MaliciousContentScanner();
    scanner.push('"No";"Timestamp";"Descr');
    expect(scanner.push('iption";"Reference"\n')).toBe(false);
  });

  it('a scanner resumed from another one\'s tail finds a pattern across the resume point', () => {
    const first = new MaliciousContentScanner();
    first.push('time,v\n2024-01-01,1 <scr');
    expect(first.found).toBe(false);
    const resumed = new MaliciousContentScanner(first.tail);
    expect(resumed.push('ipt>\n')).toBe(true);
    expect(new MaliciousContentScanner().push('ipt>\n')).toBe(false);
  });
});
