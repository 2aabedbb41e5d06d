/* railkit-raw-allreduce: the smallest honest MPI_Allreduce timing loop, the baseline that
 * scripts/perf/overhead.sh compares railkit-bench against. Not a test.
 *
 * Usage: railkit-raw-allreduce BYTES ITERS WARMUP
 * Float buffers (malloc'd, touched before timing), MPI_SUM, out of place. WARMUP untimed calls,
 * MPI_Barrier, ITERS timed calls around one MPI_Wtime pair, MPI_Barrier. Each rank's loop time /
 * ITERS is averaged over ranks (as railkit-bench -a 1) and rank 0 prints one line:
 *   BYTES AVG_US_PER_OP
 * BYTES is the size actually used (rounded down to a multiple of sizeof(float)). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long parse_ll(const char* what, const char* s, long long lo) {
  char* end = NULL;
  const long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v < lo) {
    fprintf(stderr, "railkit-raw-allreduce: %s '%s': expected an integer >= %lld\n", what, s, lo);
    return -1;
  }
  return v;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: %s BYTES ITERS WARMUP\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long long bytes_req = parse_ll("BYTES", argv[1], (long long)sizeof(float));
  const long long iters = parse_ll("ITERS", argv[2], 1);
  const long long warmup = parse_ll("WARMUP", argv[3], 0);
  if (bytes_req < 0 || iters < 0 || warmup < 0) {
    MPI_Finalize();
    return 2;
  }
  const long long count_ll = bytes_req / (long long)sizeof(float);
  if (count_ll > 0x7fffffffLL) {
    if (rank == 0) fprintf(stderr, "railkit-raw-allreduce: %lld elements exceed MPI's int count\n", count_ll);
    MPI_Finalize();
    return 2;
  }
  const int count = (int)count_ll;
  const size_t bytes = (size_t)count * sizeof(float);
  float* send = (float*)malloc(bytes);
  float* recv = (float*)malloc(bytes);
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "railkit-raw-allreduce: rank %d: cannot allocate 2 x %zu bytes\n", rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
  for (int i = 0; i < count; ++i) send[i] = (float)((rank + i) % 7);
  memset(recv, 0, bytes);

  for (long long w = 0; w < warmup; ++w) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long long i = 0; i < iters; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double per_op_us = (MPI_Wtime() - t0) * 1e6 / (double)iters;
  MPI_Barrier(MPI_COMM_WORLD);

  double sum_us = 0;
  MPI_Reduce(&per_op_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%zu %.3f\n", bytes, sum_us / nranks);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
