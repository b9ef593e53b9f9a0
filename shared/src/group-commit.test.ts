import { describe, expect, it } from 'vitest';
import { GroupCommit, type Sender } from './group-commit.ts';

/** A committer whose flushes wait until released, recording what each flush held. */
function recordingCommit(options: { maxWeight?: number; failWhen?: (items: string[]) => boolean } = {}) {
  const flushes: string[][] = [];
  const releases: Array<() => void> = [];
  const commit = new GroupCommit<string>({
    flush: async (items) => {
      flushes.push(items);
      await new Promise<void>((resolve) => releases.push(resolve));
      if (options.failWhen?.(items)) throw new Error(`failed: ${items.join(',')}`);
    },
    weigh: (item) => item.length,
    maxWeight: options.maxWeight ?? 100,
  });
  /** Lets every flush started so far finish, and waits for the ones that follow to start. */
  const releaseAll = async () => {
    // Flushes start a turn after their first item.
    await new Promise((resolve) => setImmediate(resolve));
    while (releases.length > 0) releases.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { commit, flushes, releaseAll };
}

describe('GroupCommit', () => {
  it('flushes on the next turn what was submitted until then, and the items that arrived meanwhile together', async () => {
    const { commit, flushes, releaseAll } = recordingCommit();
    // Submitted in the same turn (requests read in the same poll): one flush.
    const first = ['a', 'b'].map((item) => commit.submit(item));
    expect(flushes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes).toEqual([['a', 'b']]);
    const waiting = ['c', 'd', 'e'].map((item) => commit.submit(item));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes).toEqual([['a', 'b']]);
    await releaseAll();
    expect(flushes).toEqual([['a', 'b'], ['c', 'd', 'e']]);
    await releaseAll();
    await expect(Promise.all(first)).resolves.toEqual(Array(2).fill(undefined));
    await expect(Promise.all(waiting)).resolves.toEqual(Array(3).fill(undefined));
  });

  it('takes items up to the maximum weight per flush, and a heavier item alone', async () => {
    const { commit, flushes, releaseAll } = recordingCommit({ maxWeight: 5 });
    const all = ['x', 'aa', 'bbb', 'cc', 'dddddddd', 'e'].map((item) => commit.submit(item));
    for (let round = 0; round < 5; round += 1) await releaseAll();
    await Promise.all(all);
    expect(flushes).toEqual([['x', 'aa'], ['bbb', 'cc'], ['dddddddd'], ['e']]);
  });

  it('flushes each item of a failed group again alone: only the bad one fails', async () => {
    const { commit, flushes, releaseAll } = recordingCommit({ failWhen: (items) => items.includes('bad') });
    const first = commit.submit('first');
    await new Promise((resolve) => setImmediate(resolve));
    const outcomes = ['good', 'bad', 'fine'].map((item) => commit.submit(item).then((outcome) => outcome, (error: Error) => error.message));
    for (let round = 0; round < 6; round += 1) await releaseAll();
    await expect(first).resolves.toBeUndefined();
    expect(await Promise.all(outcomes)).toEqual([undefined, 'failed: bad', undefined]);
    expect(flushes).toEqual([['first'], ['good', 'bad', 'fine'], ['good'], ['bad'], ['fine']]);
  });

  it('fails a lone item without flushing it again, and keeps serving later items', async () => {
    const { commit, flushes, releaseAll } = recordingCommit({ failWhen: (items) => items.includes('bad') });
    const bad = commit.submit('bad').catch((error: Error) => error.message);
    await releaseAll();
    expect(await bad).toBe('failed: bad');
    const later = commit.submit('later');
    await releaseAll();
    await expect(later).resolves.toBeUndefined();
    expect(flushes).toEqual([['bad'], ['later']]);
  });
});

describe('GroupCommit results', () => {
  it('answers each item its own result, also from a flush made again alone', async () => {
    const commit = new GroupCommit<number, string>({
      flush: async (items) => {
        if (items.length > 1 && items.includes(2)) throw new Error('group failed');
        return items.map((item) => `stored ${item}`);
      },
      weigh: () => 1,
      maxWeight: 10,
      maxItems: 2,
    });
    const outcomes = await Promise.all([1, 2, 3, 4].map((item) => commit.submit(item)));
    expect(outcomes).toEqual(['stored 1', 'stored 2', 'stored 3', 'stored 4']);
  });

  describe('with senders on their way', () => {
    /** A committer that flushes at once unless senders set out. */
    function expectingCommit(awaitSendersMs = 60_000) {
      const flushes: string[][] = [];
      const commit = new GroupCommit<string>({
        flush: async (items) => { flushes.push(items); },
        weigh: (item) => item.length,
        maxWeight: 100,
        awaitSendersMs,
      });
      /** A sender that set out submits its item and says it arrived. */
      const arrive = (sender: Sender, item: string) => {
        const submitted = commit.submit(item);
        sender.arrived();
        return submitted;
      };
      return { commit, flushes, arrive };
    }

    it('waits for the senders on their way, then flushes their items with the first', async () => {
      const { commit, flushes, arrive } = expectingCommit();
      const [second, third] = [commit.setOut(), commit.setOut()];
      const first = commit.submit('a');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(flushes).toEqual([]);
      const secondSubmitted = arrive(second, 'b');
      await new Promise((resolve) => setImmediate(resolve));
      expect(flushes).toEqual([]);
      await Promise.all([first, secondSubmitted, arrive(third, 'c')]);
      expect(flushes).toEqual([['a', 'b', 'c']]);
    });

    it('does not wait for senders that set out while it waits', async () => {
      const { commit, flushes, arrive } = expectingCommit();
      const second = commit.setOut();
      const first = commit.submit('a');
      await new Promise((resolve) => setImmediate(resolve));
      commit.setOut(); // another job starts meanwhile: a steady stream must not hold the flush
      await Promise.all([first, arrive(second, 'b')]);
      expect(flushes).toEqual([['a', 'b']]);
    });

    it('flushes once a sender arrives with nothing, and counts a sender once', async () => {
      const { commit, flushes } = expectingCommit();
      const [second, third] = [commit.setOut(), commit.setOut()];
      const first = commit.submit('a');
      await new Promise((resolve) => setTimeout(resolve, 20));
      second.arrived();
      second.arrived(); // said twice: still one sender; the flush still waits for the third
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(flushes).toEqual([]);
      third.arrived();
      await first;
      expect(flushes).toEqual([['a']]);
    });

    it('waits no longer than its bound for a sender that never says', async () => {
      const { commit, flushes } = expectingCommit(30);
      commit.setOut();
      const started = performance.now();
      await commit.submit('a');
      expect(flushes).toEqual([['a']]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    });

    it('does not wait for senders when its wait is 0', async () => {
      const { commit, flushes } = expectingCommit(0);
      commit.setOut();
      await commit.submit('a');
      expect(flushes).toEqual([['a']]);
    });

    it('flushes at once when no sender is on its way', async () => {
      const { commit, flushes } = expectingCommit();
      commit.setOut().arrived();
      await commit.submit('a');
      expect(flushes).toEqual([['a']]);
    });
  });

  describe('with a minimum interval between flushes', () => {
    function spacedCommit(minIntervalMs: number, maxWeight = 100) {
      const flushes: string[][] = [];
      const commit = new GroupCommit<string>({ flush: async (items) => { flushes.push(items); }, weigh: (item) => item.length, maxWeight, minIntervalMs });
      return { commit, flushes };
    }

    it('gathers what arrives within the interval into one flush', async () => {
      const { commit, flushes } = spacedCommit(200);
      await commit.submit('a');
      const later = ['b', 'c', 'd'].map((item) => commit.submit(item));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(flushes).toEqual([['a']]);
      await Promise.all(later);
      expect(flushes).toEqual([['a'], ['b', 'c', 'd']]);
    });

    it('flushes at once after a quiet spell, and when the waiting items make a full flush', async () => {
      const quiet = spacedCommit(30);
      await quiet.commit.submit('a');
      await new Promise((resolve) => setTimeout(resolve, 60));
      const afterQuiet = quiet.commit.submit('b');
      await new Promise((resolve) => setImmediate(resolve));
      expect(quiet.flushes).toEqual([['a'], ['b']]);
      await afterQuiet;

      const full = spacedCommit(60_000, 3);
      await full.commit.submit('a');
      await full.commit.submit('bbb');
      expect(full.flushes).toEqual([['a'], ['bbb']]);
    });
  });
});
