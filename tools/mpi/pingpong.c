/*
 * A standalone MPI ping-pong in C: the cross-check of vcoll's in-process C loop (the binding's
 * pingpongC) in `npm run bench:mpi-pingpong`, which compiles it with mpicc (or $VCOLL_MPICC)
 * and runs it under its own mpirun with 2 ranks.
 *
 *   pingpong <rounds> <bytes>:<iterations>[,<bytes>:<iterations>...]
 *
 * Rank 0 sends `bytes` to rank 1 with MPI_Send and waits for the reply with MPI_Recv; rank 1
 * echoes (the same loop as pingpongC). Per size: `iterations / 8` untimed warm-up round trips
 * (at least 3), then `rounds` timed rounds of `iterations` round trips each; rank 0 prints one
 * line per size: "<bytes> <minimum over rounds of the mean round trip, seconds>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void loop(char *buf, int bytes, int iterations, int peer, int first) {
  for (int i = 0; i < iterations; i++) {
    if (first) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
    }
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 || size != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 pingpong <rounds> <bytes>:<iterations>[,...]\n");
    MPI_Finalize();
    return 2;
  }
  int rounds = atoi(argv[1]);
  char *spec = strdup(argv[2]);
  int peer = 1 - rank;
  for (char *item = strtok(spec, ","); item != NULL; item = strtok(NULL, ",")) {
    int bytes = 0, iterations = 0;
    if (sscanf(item, "%d:%d", &bytes, &iterations) != 2 || bytes < 0 || iterations < 1) {
      if (rank == 0) fprintf(stderr, "pingpong: bad size spec '%s'\n", item);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = calloc(bytes > 0 ? (size_t)bytes : 1, 1);
    int warmup = iterations / 8 < 3 ? 3 : iterations / 8;
    loop(buf, bytes, warmup, peer, rank == 0);
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      loop(buf, bytes, iterations, peer, rank == 0);
      double t = (MPI_Wtime() - t0) / iterations;
      if (t < best) best = t;
    }
    if (rank == 0) printf("%d %.9e\n", bytes, best);
    free(buf);
  }
  fflush(stdout);
  free(spec);
  MPI_Finalize();
  return 0;
}
