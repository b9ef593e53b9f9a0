/**
 * glibc malloc settings of the api process. On the virtual machines we run on, touching freshly
 * mapped memory costs far more than reusing memory (copying into a new 3.8 MB buffer ran at 1 GB/s,
 * into a reused one at 27 GB/s), and every bulk post allocates its body, answer and rows afresh. With
 * these settings buffers below 32 MiB come from the heap and up to 64 MiB of freed memory is kept for
 * the next post instead of being handed back to the kernel: the bulk endpoint gained about an eighth
 * (`npm run bench`) and the api's peak during the 1 GiB CSV rose by about 20 MB. The ingest-worker
 * keeps glibc's defaults: its peak is the one close to its 300 MB target.
 * Dockerfile.api sets the same value (checked by api/test/platform/deploy-consistency.test.ts).
 */
export const API_GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864';

/** The api's environment: GLIBC_TUNABLES as set by the caller (even empty), else ours. */
export function apiProcessEnv(env) {
  return { ...env, GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? API_GLIBC_TUNABLES };
}
