#!/usr/bin/env node
// Entry point of the `vcoll` command: runs the compiled CLI (built by `npm ci` via `prepare`).
import { main } from '../dist/cli/main.js';

main(process.argv).catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
