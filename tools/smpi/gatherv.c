/*
 * One MPI_Gatherv to root 0, for the SMPI side of tools/sim-scale.ts (`npm run bench:sim-scale`).
 *
 *   smpicc -O2 -o gatherv tools/smpi/gatherv.c
 *   smpirun -no-privatize -np P -platform plat.xml -hostfile hosts ./gatherv counts.bin
 *
 * counts.bin: P block sizes in bytes, int32 little-endian (read in host order: x86), one per
 * rank; sim-scale writes the sizes vcoll's run uses: sharedBlockSizes('random', { p, b: 100,
 * rho: 5, seed: 1 }). Each rank reads its own count (the root reads them all), fills its block
 * with a pattern of its rank and the byte's index, and after an MPI_Barrier calls MPI_Gatherv
 * once. The root checks every byte and prints one line (peak RSS in KiB, CPU user + sys):
 *
 *   verified 1 bytes <gathered> simtime <simulated s of the gatherv> maxrss_kib <KiB> cpu_s <s>
 *
 * Everything is local to main: no global variables, so it runs without SMPI's privatization.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static unsigned char pattern(int rank, int i) { return (unsigned char)(rank * 131 + i * 7 + 1); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: gatherv COUNTS_FILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL) {
    perror(argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int n = rank == 0 ? p : 1;
  int32_t *counts = malloc(sizeof(int32_t) * (size_t)n);
  if (counts == NULL || fseek(f, rank == 0 ? 0L : (long)rank * 4, SEEK_SET) != 0 || fread(counts, 4, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "rank %d: cannot read %d counts from %s\n", rank, n, argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fclose(f);
  int mine = counts[0]; /* the root's list starts with its own */
  unsigned char *block = malloc((size_t)mine + 1);
  for (int i = 0; i < mine; i++) block[i] = pattern(rank, i);

  int *rcounts = NULL, *displs = NULL;
  unsigned char *all = NULL;
  long total = 0;
  if (rank == 0) {
    rcounts = malloc(sizeof(int) * (size_t)p);
    displs = malloc(sizeof(int) * (size_t)p);
    for (int r = 0; r < p; r++) {
      rcounts[r] = counts[r];
      displs[r] = (int)total;
      total += counts[r];
    }
    all = malloc((size_t)total + 1);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  MPI_Gatherv(block, mine, MPI_BYTE, all, rcounts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  t = MPI_Wtime() - t;

  if (rank == 0) {
    int ok = 1;
    for (int r = 0; r < p && ok; r++)
      for (int i = 0; i < rcounts[r]; i++)
        if (all[displs[r] + i] != pattern(r, i)) {
          fprintf(stderr, "rank %d byte %d: got %d, want %d\n", r, i, all[displs[r] + i], pattern(r, i));
          ok = 0;
          break;
        }
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    double cpu = (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    printf("verified %d bytes %ld simtime %.9g maxrss_kib %ld cpu_s %.3f\n", ok, total, t, u.ru_maxrss, cpu);
    fflush(stdout);
    free(all);
    free(rcounts);
    free(displs);
  }
  free(block);
  free(counts);
  MPI_Finalize();
  return 0;
}
