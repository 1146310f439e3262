#!/usr/bin/env node
// Entry point of the `vcoll` command. The installed package runs the compiled CLI (dist/,
// built by `npm run build`, which `npm pack` runs); a source checkout that was never built
// runs the TypeScript sources through tsx (a dev dependency).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
const sources = new URL('../src/cli/main.ts', import.meta.url);

async function loadMain() {
  if (existsSync(compiled)) return (await import(compiled.href)).main;
  if (existsSync(sources)) {
    const { register } = await import('tsx/esm/api');
    register();
    return (await import(sources.href)).main;
  }
  throw new Error(`vcoll: ${compiled.pathname} is missing; run \`npm run build\``);
}

loadMain()
  .then((main) => main(process.argv))
  .catch((err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
