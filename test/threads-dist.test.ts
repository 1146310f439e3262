/**
 * runThreads from the compiled package: builds src/ with tsconfig.build.json into a private
 * directory (fresh on every run, so it tests the current sources and never touches the shared
 * dist/ other processes may be using), then runs a plain `node` process that imports the
 * compiled index.js and runs p = 3 ranks of a .mjs program from a temporary directory: no
 * TypeScript loader anywhere (the workers start from the compiled worker.js).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
// Inside the repository (under node_modules/.cache) so the compiled files resolve the
// package's dependencies; a package.json there makes the .js files ES modules.
mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
const dir = mkdtempSync(join(root, 'node_modules', '.cache', 'vcoll-threads-dist-'));
const out = join(dir, 'dist');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out, '--declaration', 'false', '--sourceMap', 'false'],
    { cwd: root, encoding: 'utf8', timeout: 170_000 },
  );
  // Type errors elsewhere in the tree do not stop tsc from emitting; a missing file does.
  for (const f of ['index.js', 'transports/threads/run.js', 'transports/threads/worker.js']) {
    if (!existsSync(join(out, f))) throw new Error(`tsc did not emit ${f}:\n${r.stdout}\n${r.stderr}`);
  }
}, 180_000);

/** Writes a file into the temp dir and returns its file URL. */
function file(name: string, source: string): string {
  writeFileSync(join(dir, name), source);
  return pathToFileURL(join(dir, name)).href;
}

function runNode(script: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('runThreads from the compiled package', () => {
  it('runs p = 3 ranks of a .mjs program: ring exchange of large misaligned messages, ANY_SOURCE gather', () => {
    const program = file(
      'program.mjs',
      `export default async function (comm, args) {
         const { len } = args, p = comm.size, me = comm.rank;
         const next = (me + 1) % p, prev = (me + p - 1) % p;
         const fill = (b, seed) => { for (let i = 0; i < b.length; i++) b[i] = (i * 31 + seed * 17) & 255; };
         // send from and receive into views at odd offsets (the channel's aligned copies and its bounce path)
         const out = new Uint8Array(len + 3).subarray(3); fill(out, me);
         const into = new Uint8Array(len + 6).subarray(5, 5 + len);
         const [, st] = await comm.waitAll([comm.isend(next, 7, out), comm.irecv(prev, 7, into)]);
         const want = new Uint8Array(len); fill(want, prev);
         let ringOk = st.source === prev && st.tag === 7 && st.bytes === len;
         for (let i = 0; i < len; i++) if (into[i] !== want[i]) { ringOk = false; break; }
         // everyone reports to rank 0, which receives from ANY_SOURCE
         if (me !== 0) { await comm.send(0, 8, Uint8Array.of(me, ringOk ? 1 : 0)); return { me, ringOk }; }
         const seen = [];
         for (let k = 1; k < p; k++) { const b = new Uint8Array(2); const s = await comm.recv(-1, 8, b); seen.push([s.source, b[0], b[1]]); }
         seen.sort((a, b) => a[0] - b[0]);
         return { me, ringOk, seen };
       }`,
    );
    const driver = file(
      'driver.mjs',
      `import { runThreads } from ${JSON.stringify(pathToFileURL(join(out, 'index.js')).href)};
       const results = await runThreads(3, ${JSON.stringify(program)}, { len: 100_003 }, { channelBytes: 4096 });
       console.log(JSON.stringify(results));`,
    );
    const r = runNode(fileURLToPath(driver));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { me: 0, ringOk: true, seen: [[1, 1, 1], [2, 2, 1]] },
      { me: 1, ringOk: true },
      { me: 2, ringOk: true },
    ]);
  });

  it('a failing rank rejects the run with a CommunicationError naming it, and the process exits', () => {
    const program = file(
      'fails.mjs',
      `export default async function (comm) {
         if (comm.rank === 1) throw new Error('compiled boom');
         await comm.recv(1, 0, new Uint8Array(1)); // never satisfied: must fail fast, not hang
       }`,
    );
    const driver = file(
      'driver-fails.mjs',
      `import { runThreads, CommunicationError } from ${JSON.stringify(pathToFileURL(join(out, 'index.js')).href)};
       const t0 = Date.now();
       const e = await runThreads(3, ${JSON.stringify(program)}, null, { failureGraceMs: 30_000 }).then(() => null, (x) => x);
       console.log(JSON.stringify({ typed: e instanceof CommunicationError, rank: e?.rank, message: e?.message, fast: Date.now() - t0 < 20_000 }));`,
    );
    const r = runNode(fileURLToPath(driver));
    expect(r.status).toBe(0);
    const res = JSON.parse(r.stdout) as { typed: boolean; rank: number; message: string; fast: boolean };
    expect(res).toMatchObject({ typed: true, rank: 1, fast: true });
    expect(res.message).toMatch(/rank 1 failed: compiled boom/);
  });
});
