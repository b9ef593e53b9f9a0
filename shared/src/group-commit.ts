/**
 * Group commit: items submitted while a flush runs wait for it and then go out together in the next
 * flush. Bulk posts arrive many at a time; ClickHouse pays per insert (a part to write and later merge)
 * and per rollup statement, so a flush of several posts costs little more than one. An idle committer
 * flushes at once: no item waits for company. When a flush of several items fails, each is flushed
 * again alone, so one bad item (or a failure of the whole) settles each item on its own.
 */
interface Pending<T, R> {
  item: T;
  weight: number;
  resolve: (outcome: FlushOutcome<R>) => void;
  reject: (error: unknown) => void;
}

export interface FlushOutcome<R = void> {
  /** The item was written by a second flush of its own after a group flush failed part-way. */
  flushedAgain: boolean;
  /** What the flush answered for the item. */
  result: R;
}

export interface GroupCommitOptions<T, R = void> {
  /** Writes the items together and answers one result per item, in order (or nothing when R is void); throwing fails every item of the flush. */
  flush: (items: T[]) => Promise<R[] | void>;
  /** The size of an item (points, bytes); a flush takes items up to `maxWeight` (at least one). */
  weigh: (item: T) => number;
  maxWeight: number;
  /** At most this many items per flush (default: no limit but the weight). */
  maxItems?: number;
}

export class GroupCommit<T, R = void> {
  private readonly queue: Array<Pending<T, R>> = [];
  private flushing = false;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  /** Resolves once a flush holding the item succeeded. */
  submit(item: T): Promise<FlushOutcome<R>> {
    return new Promise<FlushOutcome<R>>((resolve, reject) => {
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
          const results = await this.options.flush(batch.map((pending) => pending.item));
          batch.forEach((pending, index) => pending.resolve({ flushedAgain: false, result: results?.[index] as R }));
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            continue;
          }
          for (const pending of batch) {
            try {
              const results = await this.options.flush([pending.item]);
              pending.resolve({ flushedAgain: true, result: results?.[0] as R });
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

  private takeBatch(): Array<Pending<T, R>> {
    let weight = this.queue[0]!.weight;
    let count = 1;
    const maxItems = this.options.maxItems ?? Number.POSITIVE_INFINITY;
    while (count < this.queue.length && count < maxItems && weight + this.queue[count]!.weight <= this.options.maxWeight) {
      weight += this.queue[count]!.weight;
      count += 1;
    }
    return this.queue.splice(0, count);
  }
}
