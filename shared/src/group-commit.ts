/**
 * Group commit: items submitted while a flush runs wait for it and then go out together in the next
 * flush. Bulk posts arrive many at a time; ClickHouse pays per insert (a part to write and later merge)
 * and per rollup statement, so a flush of several posts costs little more than one. An idle committer
 * flushes on the next turn of the event loop, with every item submitted until then: feeds waiting for
 * their answers post again together, and the requests read in the same poll of the sockets go out in
 * one flush instead of the first alone (measured with the bench's feeds: a quarter fewer ClickHouse
 * inserts). No item waits longer for company, unless senders are known to be on their way (`setOut`).
 * When a flush of several items fails, each is flushed again alone, so one bad item (or a failure of
 * the whole) settles each item on its own.
 */
interface Pending<T, R> {
  item: T;
  weight: number;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<T, R = void> {
  /** Writes the items together and answers one result per item, in order (or nothing when R is void); throwing fails every item of the flush. */
  flush: (items: T[]) => Promise<R[] | void>;
  /** The size of an item (points, bytes); a flush takes items up to `maxWeight` (at least one). */
  weigh: (item: T) => number;
  maxWeight: number;
  /** At most this many items per flush (default: no limit but the weight). */
  maxItems?: number;
  /**
   * Senders known to be on their way (`setOut`: a job already started, a post being read, each bringing
   * any number of items, or none): before a flush, the committer waits for as many senders as are on
   * their way then to say they arrived, for at most this many milliseconds (none or 0: no wait); senders that set out
   * meanwhile are not waited for, so a steady stream never holds a flush to its bound. Bulk jobs reach
   * the rollups a few milliseconds apart; a flush that waits for the ones already being written makes
   * one rollup part for them all instead of one each.
   */
  awaitSendersMs?: number;
  /**
   * A flush starts at least this many milliseconds after the previous one started (none or 0: at
   * once), unless the items waiting already make a full flush: what arrives meanwhile goes out
   * together. For work done after the answer, which a steady stream would otherwise flush as often as
   * it can, a statement or a ClickHouse part for every few items; an item after a quiet spell still
   * goes at once.
   */
  minIntervalMs?: number;
}

/** A sender on its way to a committer. */
export interface Sender {
  /** It submitted all it brings (in the same turn), or will bring nothing. Idempotent. */
  arrived(): void;
}

export class GroupCommit<T, R = void> {
  private readonly queue: Array<Pending<T, R>> = [];
  /** A drain is scheduled or running: submitted items wait for it. */
  private flushing = false;
  private wake: (() => void) | null = null;
  /** Senders on their way. */
  private sendersOut = 0;
  /** Senders a waiting flush still waits for. */
  private awaited = 0;
  /** When the last flush started (performance.now()). */
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  /** The weight of the items waiting. */
  private queuedWeight = 0;
  /** Ends a spacing wait early (the items waiting make a full flush). */
  private endSpacing: (() => void) | null = null;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  /** Resolves, with what the flush answered for it, once a flush holding the item succeeded. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const weight = this.options.weigh(item);
      this.queue.push({ item, weight, resolve, reject });
      this.queuedWeight += weight;
      if (this.endSpacing && this.full()) this.endSpacing();
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  /**
   * Counts a sender as on its way until it says it arrived (see `awaitSendersMs`). Counted in senders,
   * not items: a job bringing many items is one arrival.
   */
  setOut(): Sender {
    this.sendersOut += 1;
    let out = true;
    return {
      arrived: () => {
        if (!out) return;
        out = false;
        this.sendersOut -= 1;
        this.senderArrived();
      },
    };
  }

  private senderArrived(): void {
    if (!this.flushing || this.awaited === 0) return;
    this.awaited -= 1;
    if (this.awaited > 0) return;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Runs while `flushing` (set by `submit` when it schedules it). */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const spacedUntil = this.lastFlushAt + (this.options.minIntervalMs ?? 0);
        if (performance.now() < spacedUntil && !this.full()) await this.spaceUntil(spacedUntil);
        // A pause only while senders are on their way: with none (or no wait set), a flush starts now.
        const waitMs = this.options.awaitSendersMs ?? 0;
        if (this.sendersOut > 0 && waitMs > 0) await this.awaitSenders(waitMs);
        this.lastFlushAt = performance.now();
        const batch = this.takeBatch();
        try {
          const results = await this.options.flush(batch.map((pending) => pending.item));
          batch.forEach((pending, index) => pending.resolve(results?.[index] as R));
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            continue;
          }
          for (const pending of batch) {
            try {
              const results = await this.options.flush([pending.item]);
              pending.resolve(results?.[0] as R);
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

  /** Waits until `until` (performance.now()), or until the items waiting make a full flush. */
  private async spaceUntil(until: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, until - performance.now());
      this.endSpacing = () => { clearTimeout(timer); resolve(); };
    });
    this.endSpacing = null;
  }

  /** The items waiting make a full flush: their weight, or as many as a flush takes. */
  private full(): boolean {
    return this.queuedWeight >= this.options.maxWeight || this.queue.length >= (this.options.maxItems ?? Number.POSITIVE_INFINITY);
  }

  private async awaitSenders(maxWaitMs: number): Promise<void> {
    if (this.full()) return;
    this.awaited = this.sendersOut;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxWaitMs);
      this.wake = () => { clearTimeout(timer); resolve(); };
    });
    this.wake = null;
    this.awaited = 0;
  }

  private takeBatch(): Array<Pending<T, R>> {
    let weight = this.queue[0]!.weight;
    let count = 1;
    const maxItems = this.options.maxItems ?? Number.POSITIVE_INFINITY;
    while (count < this.queue.length && count < maxItems && weight + this.queue[count]!.weight <= this.options.maxWeight) {
      weight += this.queue[count]!.weight;
      count += 1;
    }
    this.queuedWeight -= weight;
    return this.queue.splice(0, count);
  }
}
