/**
 * Admission of bulk posts by size: a post takes its body's declared size from a shared budget before
 * its body is read and gives it back once its exchange is over. The body, answer and rows a post holds
 * are a few times its size, so the api's memory stays bounded however many feeds post at once; posts
 * beyond the budget wait their turn in arrival order, their bodies still unread.
 *
 * One organisation never holds more than its share of the budget: its further posts wait for its own
 * posts to finish, while other organisations' posts go ahead. A post of unknown length (chunked) or
 * larger than the share takes the whole share, so it runs alone within its organisation. Without the
 * share, a feed that opens a post and stops sending held everyone's bulk writes until it closed.
 *
 * What a post holds goes back when its response closes, which Node reports for every ending: answered
 * (successfully or with an error), timed out, or the connection dropped at any stage. A post whose
 * client leaves while it waits leaves the queue at once. A post whose data is recorded gives back all
 * but its answer's bytes at once (keepAdmittedBytes): waiting for its job (`?wait=true`) it holds
 * nothing else, and holding its body's bytes then would let only a few large posts be in hand at a
 * time, each waiting on the ingest-worker while the api idles.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../platform/http-error.ts';

/** Gives back what a request took from a ByteBudget, all of it or all but `keep` bytes. */
export type GiveBack = (keep?: number) => void;

interface Waiter {
  bytes: number;
  owner: string;
  grant: () => void;
}

/**
 * Bytes shared by requests, granted in arrival order, with at most `share` held by any one owner.
 * A request that waits only on its own owner's share does not hold up other owners' requests; a
 * request that waits on the shared budget does (so a large request is not overtaken for ever by small
 * ones). (async-mutex's weighted Semaphore walks every unit of its value on each release: tens of
 * milliseconds per post for a budget counted in bytes.)
 */
export class ByteBudget {
  private available: number;
  readonly share: number;
  private readonly heldBy = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(readonly capacity: number, share: number = capacity) {
    this.available = capacity;
    this.share = Math.max(1, Math.min(share, capacity));
  }

  /** Bytes the owner holds now. */
  held(owner: string): number {
    return this.heldBy.get(owner) ?? 0;
  }

  /** Bytes free in the shared budget now. */
  free(): number {
    return this.available;
  }

  /**
   * Resolves with the function that gives the bytes back (at most the share is taken): all of them, or
   * all but `keep` when the request still holds that much (a later call gives back the rest). An aborted
   * signal takes a waiting request out of the queue and rejects with the signal's reason.
   */
  async take(requested: number, owner = '', signal?: AbortSignal): Promise<GiveBack> {
    signal?.throwIfAborted();
    const now = this.takeNow(requested, owner);
    if (now) return now;
    const bytes = this.bounded(requested);
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { bytes, owner, grant: () => { signal?.removeEventListener('abort', onAbort); resolve(); } };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        // Its leaving may unblock those queued behind it.
        this.grantWaiting();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.grantWaiting();
    });
    return this.giveBack(bytes, owner);
  }

  /** take() when the bytes fit now and nobody waits ahead: the give-back, else null (nothing taken). */
  takeNow(requested: number, owner = ''): GiveBack | null {
    const bytes = this.bounded(requested);
    if (this.waiting.length > 0 || !this.fits(bytes, owner)) return null;
    this.hold(bytes, owner);
    return this.giveBack(bytes, owner);
  }

  private bounded(requested: number): number {
    return Math.min(Math.max(1, requested), this.share);
  }

  private giveBack(bytes: number, owner: string): GiveBack {
    let holding = bytes;
    return (keep = 0) => {
      const back = holding - Math.min(holding, Math.max(0, keep));
      if (back <= 0) return;
      holding -= back;
      this.available += back;
      const left = this.held(owner) - back;
      if (left > 0) this.heldBy.set(owner, left);
      else this.heldBy.delete(owner);
      this.grantWaiting();
    };
  }

  private fits(bytes: number, owner: string): boolean {
    return bytes <= this.available && this.held(owner) + bytes <= this.share;
  }

  private hold(bytes: number, owner: string): void {
    this.available -= bytes;
    this.heldBy.set(owner, this.held(owner) + bytes);
  }

  private grantWaiting(): void {
    // Owners already passed over keep their arrival order among themselves.
    const passedOver = new Set<string>();
    for (let index = 0; index < this.waiting.length;) {
      const next = this.waiting[index]!;
      if (passedOver.has(next.owner) || this.held(next.owner) + next.bytes > this.share) {
        passedOver.add(next.owner);
        index += 1;
        continue;
      }
      if (next.bytes > this.available) return;
      this.waiting.splice(index, 1);
      this.hold(next.bytes, next.owner);
      next.grant();
    }
  }
}

const admissions = new WeakMap<FastifyRequest, GiveBack>();

/**
 * Gives back an admitted post's bytes but `keep`: once its data is recorded, a post that waits for its
 * job holds only its answer, and its body's bytes let the posts queued behind it be read meanwhile.
 */
export function keepAdmittedBytes(request: FastifyRequest, keep: number): void {
  admissions.get(request)?.(keep);
}

/** The client left before its post was admitted; nobody reads this answer. */
const CLIENT_GONE = 'The client closed the connection before its post was admitted';

/**
 * Registers the admission on a scope whose routes take bulk bodies; `ownerOf` names whose share a
 * request counts against (its organisation), and runs after authentication.
 */
export function admitBulkPostsBySize(
  scope: FastifyInstance,
  budget: { bytes: number; perOwner: number; maxBodyBytes: number },
  ownerOf: (request: FastifyRequest) => string,
): ByteBudget {
  const byteBudget = new ByteBudget(budget.bytes, budget.perOwner);

  scope.addHook('onRequest', async (request, reply) => {
    const declared = Number(request.headers['content-length']);
    // A body of unknown length (chunked) may be as large as the route accepts.
    const bytes = Number.isSafeInteger(declared) && declared > 0 ? declared : budget.maxBodyBytes;
    if (reply.raw.destroyed || request.raw.socket?.destroyed) throw new HttpError(400, CLIENT_GONE);
    const owner = ownerOf(request);
    // Only a post that waits for its bytes gets a signal: an aborted one makes an error with its stack.
    let waiting: AbortController | null = null;
    let closed = false;
    // 'close' on the response comes once for every ending: answered, failed, timed out or dropped.
    reply.raw.once('close', () => {
      closed = true;
      waiting?.abort(new HttpError(400, CLIENT_GONE));
      admissions.get(request)?.();
    });
    const granted = byteBudget.takeNow(bytes, owner);
    if (granted) {
      admissions.set(request, granted);
      return;
    }
    waiting = new AbortController();
    const release = await byteBudget.take(bytes, owner, waiting.signal);
    // The response may have closed between the grant and this line.
    if (closed) release();
    else admissions.set(request, release);
  });
  return byteBudget;
}
