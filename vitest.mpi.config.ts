import { defineConfig } from 'vitest/config';

/**
 * The MPI suite (`npm run test:mpi`): test/mpi/*.mpi.ts, each case one or more mpirun jobs.
 * Needs the binding (`npm run build:mpi`) and an MPI library; .ci/run installs both. One file
 * at a time: the jobs already use every core.
 */
export default defineConfig({
  test: {
    include: ['test/mpi/**/*.mpi.ts'],
    testTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
