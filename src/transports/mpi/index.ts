export { loadMpiBinding, mpiBindingAvailable, BUILD_HINT, type MpiBinding, type MpiInitInfo } from './binding.js';
export { MpiEndpoint, DEFAULT_RECV_SPIN_NS, type MpiEndpointOptions } from './endpoint.js';
export { runMpi, launcherFlavor, type MpiFlavor, type RunMpiOptions } from './run.js';
export { mpiWorld, runMpiRank, DEFAULT_MPI_TIMEOUT_MS, type MpiWorld, type MpiWorldOptions } from './world.js';
export { mpiBlocking, type BlockingPointToPoint } from './blocking.js';
