/**
 * `npm run examples`: runs every example with the command its header gives and stops at the
 * first that fails. The examples import 'vcoll', that is dist/: run `npm run build` first. The
 * MPI example runs only where `mpirun` and the native binding (`npm run build:mpi`) are
 * present; otherwise it is skipped, saying why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const node = [process.execPath, '--import', 'tsx'];

/** The mpirun command line, or why the MPI example cannot run here. */
function mpirun(): string[] | string {
  const launcher = process.env.VCOLL_MPIRUN ?? 'mpirun';
  const version = spawnSync(launcher, ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) return `no ${launcher} on the PATH`;
  const binding = process.env.VCOLL_MPI_BINDING ?? `${repo}native/build/Release/vcoll_mpi.node`;
  if (!existsSync(binding)) return `the native binding is not built (no ${binding}; npm run build:mpi)`;
  const openMpi = /Open MPI|OpenRTE/i.test(version.stdout);
  const asRoot = process.getuid?.() === 0;
  return [launcher, ...(openMpi ? ['--oversubscribe'] : []), ...(openMpi && asRoot ? ['--allow-run-as-root'] : []), '-n', '4'];
}

if (!existsSync(`${repo}dist/index.js`)) {
  console.error('examples: dist/ is missing; run `npm run build` first (the examples import the built package)');
  process.exit(1);
}
const mpi = mpirun();
const examples: { file: string; command: string[] | string }[] = [
  { file: 'gatherv-threads.ts', command: node },
  { file: 'mpi-program.ts', command: typeof mpi === 'string' ? mpi : [...mpi, ...node] },
  { file: 'kang19-figure.ts', command: node },
  { file: 'traff17-table1.ts', command: node },
  { file: 'simulate-1e5.ts', command: node },
];

const summary: string[] = [];
for (const { file, command } of examples) {
  if (typeof command === 'string') {
    console.log(`\n== examples/${file}: skipped, ${command}`);
    summary.push(`${file.padEnd(20)} skipped (${command})`);
    continue;
  }
  const argv = [...command, `examples/${file}`];
  console.log(`\n== ${argv.join(' ').replace(process.execPath, 'node')}`);
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: repo, stdio: 'inherit' });
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  if (r.status !== 0) {
    console.error(`examples/${file} failed (${r.signal ?? `exit status ${r.status}`}) after ${seconds} s`);
    process.exit(1);
  }
  summary.push(`${file.padEnd(20)} ok in ${seconds} s`);
}
console.log(`\n${summary.join('\n')}`);
