/**
 * Starting a `node:worker_threads` module worker that works both from the TypeScript sources
 * (tests, tsx) and from the compiled `dist/`. Used by the threads transport (one worker per
 * block of ranks) and by the two-core optimal-tree DP (Traff17 Theorem 2, §3.2;
 * trees/optimal/parallel-kernel.ts). Cost: one thread start, tens of ms from `dist/`, a few
 * hundred ms from the sources (the worker loads tsx first).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type TransferListItem } from 'node:worker_threads';

/** True when `moduleUrl` (an `import.meta.url`) is a TypeScript source, run under tsx or vitest. */
export function isTsModule(moduleUrl: string): boolean {
  return /\.[cm]?ts$/.test(new URL(moduleUrl).pathname);
}

/**
 * The URL of the sibling module `name` of the module at `moduleUrl` (an `import.meta.url`):
 * `./name.ts` next to a TypeScript source, `./name.js` next to a compiled module.
 */
export function siblingModuleUrl(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${isTsModule(moduleUrl) ? '.ts' : '.js'}`, moduleUrl);
}

export interface ModuleWorkerOptions {
  readonly workerData?: unknown;
  readonly transferList?: readonly TransferListItem[];
}

/**
 * Starts the module at `url` in a worker thread. With `needsTs` (a TypeScript worker, or a
 * TypeScript module that the worker imports) the worker boots through tsx's `tsImport`
 * (Node 20 applies neither `--import tsx` nor `module.register` to worker threads reliably);
 * otherwise it is a plain module worker. A module that fails to load throws in the worker
 * (its 'error' event).
 */
export function startModuleWorker(url: URL, needsTs: boolean, options: ModuleWorkerOptions = {}): Worker {
  const opts = { workerData: options.workerData, transferList: options.transferList === undefined ? undefined : [...options.transferList] };
  if (!needsTs) return new Worker(url, opts);
  // The ESM build of tsx's API: its CommonJS build cannot be used from an eval worker.
  const cjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  const api = pathToFileURL(cjs.replace(/index\.cjs$/, 'index.mjs')).href;
  const boot =
    `import(${JSON.stringify(api)}).then((m) => m.tsImport(${JSON.stringify(url.href)}, ${JSON.stringify(url.href)}))` +
    `.catch((e) => { process.nextTick(() => { throw e; }); });`;
  return new Worker(boot, { ...opts, eval: true });
}
