/**
 * The MPI transport is an optional part: without the binding (or without mpirun) asking for it
 * raises an UnavailableError saying how to get it; nothing else loads it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../src/errors.js';
import { loadMpiBinding } from '../src/transports/mpi/binding.js';
import { mpiBlocking } from '../src/transports/mpi/blocking.js';
import { runMpi } from '../src/transports/mpi/run.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';

const saved = { binding: process.env.VCOLL_MPI_BINDING, mpirun: process.env.VCOLL_MPIRUN };
afterEach(() => {
  for (const [k, v] of [
    ['VCOLL_MPI_BINDING', saved.binding],
    ['VCOLL_MPIRUN', saved.mpirun],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('the MPI transport when it is not there', () => {
  it('a missing binding is an UnavailableError that says how to build it', () => {
    process.env.VCOLL_MPI_BINDING = '/nonexistent/vcoll_mpi.node';
    let caught: unknown;
    try {
      loadMpiBinding();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(UnavailableError);
    expect((caught as UnavailableError).code).toBe('UNAVAILABLE');
    expect((caught as UnavailableError).what).toBe('mpi-binding');
    expect((caught as Error).message).toMatch(/not built.*npm run build:mpi/);
    expect((caught as Error).message).toMatch(/apt-get install openmpi-bin libopenmpi-dev/);
  });

  it('runMpi rejects before launching anything: no binding, or no launcher', async () => {
    process.env.VCOLL_MPI_BINDING = '/nonexistent/vcoll_mpi.node';
    await expect(runMpi(2, new URL('./programs/comm-program.ts', import.meta.url), { batch: [] })).rejects.toMatchObject({
      name: 'UnavailableError',
      what: 'mpi-binding',
    });
    // (runMpi only checks that the binding's file exists before it launches: any file will do here)
    process.env.VCOLL_MPI_BINDING = new URL('../package.json', import.meta.url).pathname;
    process.env.VCOLL_MPIRUN = '/nonexistent/mpirun';
    await expect(runMpi(2, new URL('./programs/comm-program.ts', import.meta.url), { batch: [] }).catch((e: unknown) => e)).resolves.toSatisfy(
      (e: unknown) => e instanceof UnavailableError && /mpirun/.test(e.message),
    );
  });

  it('blocking point-to-point on a communicator of another transport is an UnavailableError', async () => {
    const res = await runSim(2, async (comm) => {
      try {
        mpiBlocking(comm);
        return 'no error';
      } catch (e) {
        return e instanceof UnavailableError ? e.what : String(e);
      }
    }, { model: linearModel({ alpha: 1, beta: 1 }) });
    expect(res.results).toEqual(['mpi-transport', 'mpi-transport']);
  });

  it('bad runMpi arguments are InvalidArgumentErrors', async () => {
    await expect(runMpi(0, 'x.ts')).rejects.toMatchObject({ name: 'InvalidArgumentError', field: 'p' });
    await expect(runMpi(2, 'x.ts', undefined, { nodes: [0] })).rejects.toMatchObject({ name: 'InvalidArgumentError', field: 'nodes' });
  });
});
