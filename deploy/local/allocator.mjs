/**
 * Memory settings of the api process: glibc's malloc, and V8's young generation (API_NODE_OPTIONS).
 *
 * glibc malloc settings of the api process. On the virtual machines we run on, touching freshly
 * mapped memory costs far more than reusing memory (copying into a new 3.8 MB buffer ran at 1 GB/s,
 * into a reused one at 27 GB/s), and every bulk post allocates its body, answer and rows afresh. With
 * these settings buffers below 32 MiB come from the heap and up to 64 MiB of freed memory is kept for
 * the next post instead of being handed back to the kernel: the bulk endpoint gained about an eighth
 * (`npm run bench`) and the api's peak during the 1 GiB CSV rose by about 20 MB. The ingest-worker
 * keeps glibc's defaults: its peak is the one close to its 300 MB target.
 * Dockerfile.api sets the same values (checked by api/test/platform/deploy-consistency.test.ts).
 */
export const API_GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864';

/**
 * V8's young generation of the api process. Each feed post allocates its body, rows and answer afresh,
 * and with V8's default (16 MB semi-spaces) the api spent about 5% of its time in scavenges during the
 * bench's feeds; with 32 MB it collects half as often: api CPU 3.1 s to 2.9 s and feeds 28 k to
 * 30 k points/s on a two-core machine (`BENCH_STEPS=feeds BENCH_FEEDS=feeds npm run bench`). It adds at
 * most 32 MB to the api's peak, within the bench's 300 MB bounds.
 */
export const API_NODE_OPTIONS = '--max-semi-space-size=32';

/**
 * The api's environment: GLIBC_TUNABLES as set by the caller (even empty), else ours; our NODE_OPTIONS
 * after the caller's, unless the caller sets the young generation itself.
 */
export function apiProcessEnv(env) {
  const nodeOptions = env.NODE_OPTIONS ?? '';
  return {
    ...env,
    GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? API_GLIBC_TUNABLES,
    NODE_OPTIONS: nodeOptions.includes('--max-semi-space-size') ? nodeOptions : `${nodeOptions} ${API_NODE_OPTIONS}`.trim(),
  };
}
