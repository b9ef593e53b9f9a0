/**
 * Which failures of a recomputation over every replica (rollups/sources.ts) let it settle for the
 * replicas that answer, recording a recheck: only a server that did not answer, in the words
 * ClickHouse 18.16 uses for it (messages as the local cluster reported them with a server killed).
 */
import { describe, expect, it } from 'vitest';
import { serverDidNotAnswer } from '../src/rollups/sources.ts';

describe('a recomputation over every replica', () => {
  it('settles for fewer replicas when a server did not answer', () => {
    for (const message of [
      'Code: 210, e.displayText() = DB::NetException: Connection refused (127.0.0.1:19001), e.what() = DB::NetException',
      'Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: \n\nCode: 210, Connection refused',
      'Code: 32, e.displayText() = DB::Exception: Attempt to read after eof, e.what() = DB::Exception',
      'Code: 209, e.displayText() = DB::NetException: Timeout exceeded while reading from socket (127.0.0.1:19002)',
    ]) expect(serverDidNotAnswer(new Error(message)), message).toBe(true);
  });

  it('leaves any other failure to the caller, which retries the whole recomputation', () => {
    for (const message of [
      'Code: 60, e.displayText() = DB::Exception: Table bp.points_local doesn\'t exist., e.what() = DB::Exception',
      'Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded',
      'Code: 62, e.displayText() = DB::Exception: Syntax error: failed at position 1',
      'Code: 2100, not a network error',
    ]) expect(serverDidNotAnswer(new Error(message)), message).toBe(false);
  });
});
