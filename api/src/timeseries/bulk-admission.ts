/**
 * Admission of bulk posts by size: a post takes its body's declared size from a shared budget before
 * its body is read and gives it back once answered (or abandoned). The body, answer and TSV a post
 * holds are a few times its size, so the api's memory stays bounded however many feeds post at once;
 * posts beyond the budget wait their turn in arrival order, their bodies still unread. A post larger
 * than the whole budget runs alone.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Bytes shared by requests, granted in arrival order. (async-mutex's weighted Semaphore walks every
 * unit of its value on each release: tens of milliseconds per post for a budget counted in bytes.)
 */
export class ByteBudget {
  private available: number;
  private readonly waiting: Array<{ bytes: number; grant: () => void }> = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  /** Resolves with the function that gives the bytes back (at most the capacity is taken). */
  async take(requested: number): Promise<() => void> {
    const bytes = Math.min(Math.max(1, requested), this.capacity);
    if (this.waiting.length > 0 || bytes > this.available) {
      await new Promise<void>((grant) => this.waiting.push({ bytes, grant }));
    } else {
      this.available -= bytes;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.available += bytes;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.bytes <= this.available) {
      const next = this.waiting.shift()!;
      this.available -= next.bytes;
      next.grant();
    }
  }
}

interface Admission {
  release?: () => void;
  /** Answered or abandoned: the budget it holds (or will be granted) goes back. */
  over: boolean;
}

export function admitBulkPostsBySize(scope: FastifyInstance, budgetBytes: number, maxBodyBytes: number): void {
  const budget = new ByteBudget(budgetBytes);
  const admissions = new WeakMap<FastifyRequest, Admission>();
  const giveBack = (request: FastifyRequest) => {
    const admission = admissions.get(request);
    if (!admission) return;
    admission.over = true;
    admission.release?.();
    admission.release = undefined;
  };

  scope.addHook('onRequest', async (request) => {
    const declared = Number(request.headers['content-length']);
    // A body of unknown length (chunked) may be as large as the route accepts.
    const bytes = Number.isSafeInteger(declared) && declared > 0 ? declared : maxBodyBytes;
    const admission: Admission = { over: false };
    admissions.set(request, admission);
    const release = await budget.take(bytes);
    // The client may have gone while the post waited.
    if (admission.over) release();
    else admission.release = release;
  });
  scope.addHook('onResponse', async (request) => giveBack(request));
  scope.addHook('onRequestAbort', async (request) => giveBack(request));
}
