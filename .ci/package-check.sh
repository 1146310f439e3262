#!/usr/bin/env bash
# vcoll as a dependency: packs the package as `npm publish` would (prepack builds dist/ from
# scratch), checks what the tarball holds, installs it into an empty project and uses it there
# the way a user would: plain Node, no TypeScript, no build tools. Checks:
#   - the tarball holds only dist/, bin/, README.md, package.json (and LICENSE if there is one);
#     nothing stale in dist/ (dist/bench/ …);
#   - `npm install <tarball>` runs no install script and prints no install-scripts warning; the
#     production tree (`npm ls --omit=dev`) has no dev tool (tsx, esbuild, typescript, node-gyp)
#     and no vega / vega-lite (optional peer dependencies);
#   - a .mjs consumer runs a gatherv on worker threads and on the simulator, verified byte for byte;
#   - `npx vcoll run --transport sim …` prints a verified JSON report;
#   - without the MPI binding (never in the tarball), MPI fails only when used, with an UnavailableError;
#   - without vega, `vcoll report` and `vcoll bench --report` fail with exit status 2 and say
#     `npm install vega vega-lite`; after that install, the report is written.
# Creates its own temporary directory and removes it; any failed check ends the script with
# "package-check: FAIL: …" and exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/vcoll-package-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "package-check: FAIL: $*" >&2
  exit 1
}
step() { echo "package-check: $*"; }
# npm's own noise (funding, audit, update notices) off; the consumer never sees the repository's env.
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
unset VCOLL_MPI_BINDING

step "npm pack (prepack builds dist/)"
npm pack --pack-destination "$TMP" --json >"$TMP/pack.json" 2>"$TMP/pack.log" || {
  cat "$TMP/pack.log" >&2
  fail "npm pack failed"
}
TARBALL="$(node -e 'const [p] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(p.filename)' "$TMP/pack.json")"
TARBALL="$TMP/$TARBALL"
[ -f "$TARBALL" ] || fail "no tarball $TARBALL"
node - "$TMP/pack.json" <<'EOF' || fail "the tarball's contents (above)"
const [p] = JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'));
const files = p.files.map((f) => f.path);
const allowed = (f) => /^(dist\/|bin\/vcoll\.js$|README\.md$|package\.json$|LICENSE(\.\w+)?$)/.test(f);
const bad = files.filter((f) => !allowed(f));
// dist/ holds exactly what src/ compiles to: no leftovers of removed sources (dist/bench/ …)
const stale = files.filter((f) => /^dist\/(bench|tools|test|examples)\//.test(f) || /\.test\.(js|d\.ts)$/.test(f));
const tops = [...new Set(files.map((f) => (f.startsWith('dist/') ? f.split('/').slice(0, 2).join('/') : f)))].sort();
console.log(`package-check: ${p.filename}: ${files.length} files, ${(p.size / 1024).toFixed(0)} KiB packed, ${(p.unpackedSize / 1024).toFixed(0)} KiB unpacked`);
console.log(`package-check:   ${tops.join(' ')}`);
for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'dist/transports/threads/worker.js', 'bin/vcoll.js']) {
  if (!files.includes(f)) bad.push(`missing ${f}`);
}
if (bad.length + stale.length > 0) {
  console.error(`unexpected in the tarball:\n  ${[...bad, ...stale].join('\n  ')}`);
  process.exit(1);
}
EOF

step "npm install the tarball into an empty project"
APP="$TMP/app"
mkdir -p "$APP"
cd "$APP"
npm init -y >/dev/null
npm install --no-audit --no-fund --foreground-scripts "$TARBALL" >"$TMP/install.log" 2>&1 || {
  cat "$TMP/install.log" >&2
  fail "npm install of the tarball failed"
}
sed 's/^/package-check:   | /' "$TMP/install.log"
if grep -Eiq 'install-scripts|gyp|prepare|postinstall|preinstall' "$TMP/install.log"; then
  fail "npm install ran or warned about install scripts (log above)"
fi
WARNINGS="$(grep -ci 'warn' "$TMP/install.log" || true)"
step "install warnings: $WARNINGS"
npm ls --omit=dev --all >"$TMP/ls.txt" 2>&1 || {
  cat "$TMP/ls.txt" >&2
  fail "npm ls --omit=dev reports a broken tree"
}
sed 's/^/package-check:   | /' "$TMP/ls.txt"
# (the optional peers show as `UNMET OPTIONAL DEPENDENCY vega@^6.4.0`: listed, not installed)
if grep -v 'UNMET OPTIONAL DEPENDENCY' "$TMP/ls.txt" | grep -Eq '(^|[ @/])(tsx|esbuild|typescript|node-gyp|vitest|vega|vega-lite)@'; then
  fail "the production tree holds a dev tool or vega (above)"
fi
[ ! -e node_modules/vega ] && [ ! -e node_modules/vega-lite ] || fail "vega was installed though it is an optional peer dependency"

step "a plain .mjs consumer: gatherv on worker threads and on the simulator"
cat >consumer.mjs <<'EOF'
// Both the launcher and the rank program of runThreads (its default export).
import { isMainThread } from 'node:worker_threads';
import { gatherv, linearModel, mpiBindingAvailable, runSim, runThreads } from 'vcoll';

export default async function rank(comm) {
  const counts = Array.from({ length: comm.size }, (_, r) => 2 * r + 1);
  const send = new Uint8Array(counts[comm.rank]).fill(comm.rank + 1);
  const recv = comm.rank === 1 ? new Uint8Array(counts.reduce((a, b) => a + b)) : undefined;
  await gatherv(comm, { root: 1, send, recv, counts: comm.rank === 1 ? counts : undefined }, { algorithm: 'adaptive' });
  return recv && Array.from(recv);
}

if (isMainThread) {
  const p = 6;
  const want = Array.from({ length: p }, (_, r) => new Array(2 * r + 1).fill(r + 1)).flat().join();
  const threads = await runThreads(p, new URL(import.meta.url));
  if (threads[1]?.join() !== want) throw new Error(`threads: wrong data ${threads[1]}`);
  const sim = await runSim(p, rank, { model: linearModel({ alpha: 100, beta: 1 }) });
  if (sim.results[1]?.join() !== want) throw new Error(`sim: wrong data ${sim.results[1]}`);
  if (mpiBindingAvailable()) throw new Error('an MPI binding was found, but the tarball ships none');
  console.log(`threads and simulator: ${want.split(',').length} bytes gathered and verified; virtual time ${sim.time}; MPI binding: absent`);
}
EOF
node consumer.mjs || fail "the .mjs consumer failed"

step "npx vcoll run --transport sim"
npx vcoll run --transport sim --p 16 --op gatherv --algorithm adaptive --dist spikes --format json >"$TMP/run.json" || fail "npx vcoll run failed"
node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (r.verified !== true) process.exit(1); console.log(`package-check:   verified, time ${r.time} (predicted ${r.predicted}), ${r.messages} messages`)' "$TMP/run.json" ||
  fail "vcoll run's report is not verified: $(cat "$TMP/run.json")"

# $1: the expected exit status; $2: what stderr must contain; the rest: the command.
expect_failure() {
  local want_status="$1" want_text="$2"
  shift 2
  local status=0
  "$@" >"$TMP/out.txt" 2>"$TMP/err.txt" || status=$?
  [ "$status" = "$want_status" ] || fail "$* exited with $status, expected $want_status: $(cat "$TMP/err.txt")"
  grep -qF -- "$want_text" "$TMP/err.txt" || fail "$* did not say '$want_text': $(cat "$TMP/err.txt")"
  echo "package-check:   exit $status: $(head -c 300 "$TMP/err.txt")"
}

step "MPI without the binding: an UnavailableError only when MPI is asked for"
expect_failure 2 "MPI binding is not built" npx vcoll run --transport mpi --p 2 --op gatherv --algorithm linear --dist same

step "vcoll report without vega / vega-lite"
npx vcoll bench --transport sim --p 4 --b 1,10 --quick --json out.json --no-progress >/dev/null || fail "npx vcoll bench failed"
expect_failure 2 "npm install vega vega-lite" npx vcoll report out.json --out report.html
[ ! -e report.html ] || fail "vcoll report wrote report.html without vega"
expect_failure 2 "npm install vega vega-lite" npx vcoll bench --transport sim --p 4 --b 1 --quick --no-progress --report report.html

step "npm install vega vega-lite, then vcoll report"
npm install --no-audit --no-fund vega vega-lite >"$TMP/vega.log" 2>&1 || {
  cat "$TMP/vega.log" >&2
  fail "npm install vega vega-lite failed"
}
npx vcoll report out.json --out report.html || fail "vcoll report failed with vega installed"
grep -q '<svg' report.html || fail "report.html has no chart"

cd "$REPO"
step "ok"
