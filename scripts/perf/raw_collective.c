/* railkit-raw-collective: the smallest honest MPI timing loops for all_reduce and all_gather,
 * back to back or barrier-separated: the baselines scripts/perf/timing_methods.sh compares
 * railkit-bench (without and with --sync) against. Not a test.
 *
 * Usage: railkit-raw-collective [--sync] OP MINBYTES MAXBYTES FACTOR ITERS WARMUP
 *   OP: all_reduce (MPI_Allreduce, MPI_SUM) | all_gather (MPI_Allgather)
 * Float buffers of the largest size (malloc'd, every page touched before timing), out of place.
 * Sizes MINBYTES, xFACTOR .. MAXBYTES, sized as railkit-bench sizes them: all_reduce count =
 * BYTES / 4; all_gather per-rank count = BYTES / 4 / ranks rounded down to whole 16 B (sizes
 * with less are skipped), BYTES = what every rank receives. Per size: WARMUP untimed calls,
 * MPI_Barrier, then ITERS timed calls:
 *   back to back (default, as nccl-tests): one MPI_Wtime pair around the loop;
 *   --sync (as IMB-MPI1 and OSU): before each call after the first an MPI_Barrier (not
 *     timed), one MPI_Wtime pair around each call, the loop time = the sum of the calls.
 * Each rank's loop time / ITERS is averaged over ranks (as railkit-bench -a 1) and rank 0 prints
 * one line per size:
 *   BYTES AVG_US_PER_OP */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long parse_ll(const char* what, const char* s, long long lo) {
  char* end = NULL;
  const long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v < lo) {
    fprintf(stderr, "railkit-raw-collective: %s '%s': expected an integer >= %lld\n", what, s, lo);
    return -1;
  }
  return v;
}

/* Elements each rank sends for `bytes` (0: skipped), as railkit-bench's coll_sizes. */
static long long send_count(int gather, long long bytes, int nranks) {
  const long long elems = bytes / (long long)sizeof(float);
  if (!gather) return elems;
  const long long block = 16 / (long long)sizeof(float);
  return (elems / nranks) / block * block;
}

static void run_op(int gather, const float* send, float* recv, int count) {
  if (gather)
    MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
  else
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int a = 1;
  const int sync = argc > 1 && strcmp(argv[1], "--sync") == 0;
  if (sync) ++a;
  if (argc - a != 6 || (strcmp(argv[a], "all_reduce") != 0 && strcmp(argv[a], "all_gather") != 0)) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [--sync] all_reduce|all_gather MINBYTES MAXBYTES FACTOR ITERS WARMUP\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int gather = strcmp(argv[a], "all_gather") == 0;
  const long long minb = parse_ll("MINBYTES", argv[a + 1], 1);
  const long long maxb = parse_ll("MAXBYTES", argv[a + 2], 1);
  const long long factor = parse_ll("FACTOR", argv[a + 3], 2);
  const long long iters = parse_ll("ITERS", argv[a + 4], 1);
  const long long warmup = parse_ll("WARMUP", argv[a + 5], 0);
  if (minb < 0 || maxb < 0 || factor < 0 || iters < 0 || warmup < 0 || minb > maxb) {
    if (rank == 0 && minb > maxb) fprintf(stderr, "railkit-raw-collective: MINBYTES > MAXBYTES\n");
    MPI_Finalize();
    return 2;
  }
  if (maxb / (long long)sizeof(float) > 0x7fffffffLL) {
    if (rank == 0) fprintf(stderr, "railkit-raw-collective: %lld bytes exceed MPI's int count\n", maxb);
    MPI_Finalize();
    return 2;
  }
  const size_t cap = (size_t)maxb;
  float* send = (float*)malloc(cap);
  float* recv = (float*)malloc(cap);
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "railkit-raw-collective: rank %d: cannot allocate 2 x %zu bytes\n", rank, cap);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
  for (size_t i = 0; i < cap / sizeof(float); ++i) send[i] = (float)((rank + (int)(i % 7)) % 7);
  memset(recv, 0, cap);

  for (long long b = minb; b <= maxb; b *= factor) {
    const int count = (int)send_count(gather, b, nranks);
    if (count == 0) continue;
    const size_t bytes = (size_t)count * sizeof(float) * (size_t)(gather ? nranks : 1);
    for (long long w = 0; w < warmup; ++w) run_op(gather, send, recv, count);
    MPI_Barrier(MPI_COMM_WORLD);
    double loop_s = 0;
    if (sync) {
      for (long long i = 0; i < iters; ++i) {
        if (i > 0) MPI_Barrier(MPI_COMM_WORLD);
        const double t = MPI_Wtime();
        run_op(gather, send, recv, count);
        loop_s += MPI_Wtime() - t;
      }
    } else {
      const double t0 = MPI_Wtime();
      for (long long i = 0; i < iters; ++i) run_op(gather, send, recv, count);
      loop_s = MPI_Wtime() - t0;
    }
    const double per_op_us = loop_s * 1e6 / (double)iters;
    double sum_us = 0;
    MPI_Reduce(&per_op_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%zu %.3f\n", bytes, sum_us / nranks);
    if (b > maxb / factor) break;
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
