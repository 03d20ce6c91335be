// SPDX-License-Identifier: MIT
/*
 * How steady this machine's CPU and memory are, second by second: what decides how finely
 * the datapath benchmark (scripts/bench-datapath.sh) can tell two forwarders apart. Two
 * loops, each counting its passes in every second of a run, pin it with taskset to the CPU
 * the forwarder uses:
 *
 *   alu     additions only: moves with the CPU the guest gets (steal, frequency);
 *   memory  each pass also writes one byte at each of 100,000 scattered addresses in
 *           8 MiB: moves with the caches and memory bandwidth the guest shares with its
 *           neighbours, as a forwarder's frame copies do.
 *
 * On a quiet machine both print counts within a few per cent of their median; where the
 * memory loop's spread is wide, so is a datapath round's, and a longer round does not help
 * if the bad seconds come in runs (docs/performance.md, "Longer rounds do not help").
 *
 *   cc -O2 bench/host-noise.c -o /tmp/host-noise && taskset -c 1 /tmp/host-noise [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS 100000
#define AREA (8u << 20)

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Passes in each of `n` seconds, into `counts`; `area` NULL runs the ALU loop. */
static void run(long *counts, int n, volatile uint8_t *area) {
  volatile uint64_t sum = 0;
  for (int s = 0; s < n; s++) {
    double start = seconds();
    long passes = 0;
    while (seconds() - start < 1.0) {
      for (uint32_t i = 0; i < STEPS; i++) {
        sum += i;
        if (area)
          area[(i * 4096u + (uint32_t)sum) & (AREA - 1)]++;
      }
      passes++;
    }
    counts[s] = passes;
  }
}

static void report(const char *name, long *counts, int n) {
  printf("%-7s", name);
  for (int s = 0; s < n; s++)
    printf(" %ld", counts[s]);
  qsort(counts, (size_t)n, sizeof *counts, by_value);
  long median = counts[n / 2];
  printf("\n%-7s min %ld (%.2f of the median) median %ld max %ld (%.2f)\n", name, counts[0],
         (double)counts[0] / (double)median, median, counts[n - 1], (double)counts[n - 1] / (double)median);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  if (n < 1) {
    fprintf(stderr, "usage: host-noise [SECONDS]\n");
    return 2;
  }
  long *counts = calloc((size_t)n, sizeof *counts);
  uint8_t *area = calloc(AREA, 1);
  if (!counts || !area)
    return 1;
  run(counts, n, NULL);
  report("alu", counts, n);
  run(counts, n, area);
  report("memory", counts, n);
  return 0;
}
