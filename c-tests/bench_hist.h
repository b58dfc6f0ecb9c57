/* The benchmarks' latency histogram (log-linear, HDR style: exact below
 * 256 ns, then 128 sub-buckets per power of two, under 1 % error) and
 * their clock. Included by c-tests/bench_latency.c and
 * c-tests/bench_handoff.c (benchmarks, not tests). */
#ifndef FLOXLOG_BENCH_HIST_H
#define FLOXLOG_BENCH_HIST_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define SUB_BITS 8
#define SUB (1u << SUB_BITS)  /* exact below this; then SUB/2 sub-buckets per power of two */
#define HALF (SUB / 2)
#define NBUCKETS (SUB + 64 * HALF)

typedef struct {
  uint64_t counts[NBUCKETS];
  uint64_t total, max, over_50us;
} hist_t;

static unsigned bucket_of(uint64_t v) {
  if (v < SUB) return (unsigned)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);
  unsigned shift = msb - (SUB_BITS - 1); /* v >> shift is in [HALF, SUB) */
  return SUB + (shift - 1) * HALF + (unsigned)((v >> shift) - HALF);
}

/* The largest value of bucket `b` (what a percentile reports). */
static uint64_t bucket_top(unsigned b) {
  if (b < SUB) return b;
  unsigned j = b - SUB, shift = j / HALF + 1;
  uint64_t m = j % HALF + HALF;
  return ((m + 1) << shift) - 1;
}

static void record(hist_t *h, uint64_t v) {
  h->counts[bucket_of(v)]++;
  h->total++;
  if (v > h->max) h->max = v;
  if (v > 50000) h->over_50us++;
}

static uint64_t percentile(const hist_t *h, double p) {
  uint64_t want = (uint64_t)(p / 100.0 * (double)h->total + 0.5);
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (unsigned b = 0; b < NBUCKETS; b++) {
    seen += h->counts[b];
    if (seen >= want) {
      uint64_t top = bucket_top(b);
      return top < h->max ? top : h->max;
    }
  }
  return h->max;
}

static uint64_t clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static inline void print_hist(const char *what, const hist_t *h) {
  printf("%-34s p50 %6llu  p90 %6llu  p99 %7llu  p99.9 %8llu  p99.99 %9llu  max %10llu ns; "
         "over 50us: %llu of %llu\n",
         what, (unsigned long long)percentile(h, 50), (unsigned long long)percentile(h, 90),
         (unsigned long long)percentile(h, 99), (unsigned long long)percentile(h, 99.9),
         (unsigned long long)percentile(h, 99.99), (unsigned long long)h->max,
         (unsigned long long)h->over_50us, (unsigned long long)h->total);
}

#endif
