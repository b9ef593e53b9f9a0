/**
 * The malicious-content check: script, javascript:, vbscript:, onload= and onerror=,
 * case-insensitive. 'script' counts only at the start of a word: real instrument exports contain
 * 'Description' and 'VesselScript=' (the DASware export in api/demo-data), which are not scripts,
 * while '<script', '</script>' and 'script:' still are.
 */
const MALICIOUS_PATTERN = /(?<![a-z0-9_])script|javascript:|vbscript:|onload\s*=|onerror\s*=/i;

/**
 * Characters kept from the previous chunk so a pattern split across a chunk boundary is still found:
 * the longest pattern ('javascript:') plus the one character the word-start rule looks behind at,
 * plus room for whitespace before '='.
 */
const CARRY_LENGTH = 32;

export function containsMaliciousContent(text: string): boolean {
  return MALICIOUS_PATTERN.test(text);
}

/** Incremental form for streamed files: feed decoded chunks in order; `found` stays true once set. */
export class MaliciousContentScanner {
  found = false;

  /** `carry`: the `tail` of a scanner that read the text before this one's first chunk (a resumed read). */
  constructor(private carry = '') {}

  /** The last characters seen, which a match across the next chunk boundary could start with. */
  get tail(): string {
    return this.carry;
  }

  /** Returns true when malicious content has been seen so far (in this or an earlier chunk). */
  push(chunk: string): boolean {
    if (this.found || chunk.length === 0) return this.found;
    const window = this.carry + chunk;
    if (MALICIOUS_PATTERN.test(window)) this.found = true;
    this.carry = window.slice(-CARRY_LENGTH);
    return this.found;
  }
}
