/**
 * Group commit: items submitted while a flush runs wait for it and then go out together in the next
 * flush. Bulk posts arrive many at a time; ClickHouse pays per insert (a part to write and later merge)
 * and per rollup statement, so a flush of several posts costs little more than one. An idle committer
 * flushes at once: no item waits for company. When a flush of several items fails, each is flushed
 * again alone, so one bad item (or a failure of the whole) settles each item on its own.
 */
interface Pending<T> {
  item: T;
  weight: number;
  resolve: (outcome: FlushOutcome) => void;
  reject: (error: unknown) => void;
}

export interface FlushOutcome {
  /** The item was written by a second flush of its own after a group flush failed part-way. */
  flushedAgain: boolean;
}

export interface GroupCommitOptions<T> {
  /** Writes the items together; throwing fails every item of the flush. */
  flush: (items: T[]) => Promise<void>;
  /** The size of an item (points, bytes); a flush takes items up to `maxWeight` (at least one). */
  weigh: (item: T) => number;
  maxWeight: number;
}

export class GroupCommit<T> {
  private readonly queue: Array<Pending<T>> = [];
  private flushing = false;

  constructor(private readonly options: GroupCommitOptions<T>) {}

  /** Resolves once a flush holding the item succeeded. */
  submit(item: T): Promise<FlushOutcome> {
    return new Promise<FlushOutcome>((resolve, reject) => {
      this.queue.push({ item, weight: this.options.weigh(item), resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        try {
          await this.options.flush(batch.map((pending) => pending.item));
          for (const pending of batch) pending.resolve({ flushedAgain: false });
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            continue;
          }
          for (const pending of batch) {
            try {
              await this.options.flush([pending.item]);
              pending.resolve({ flushedAgain: true });
            } catch (itsError) {
              pending.reject(itsError);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private takeBatch(): Array<Pending<T>> {
    let weight = this.queue[0]!.weight;
    let count = 1;
    while (count < this.queue.length && weight + this.queue[count]!.weight <= this.options.maxWeight) {
      weight += this.queue[count]!.weight;
      count += 1;
    }
    return this.queue.splice(0, count);
  }
}
