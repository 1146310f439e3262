/** The six tables of Traff17 (Table 1: α = 100; appendix Tables 2 and 3: α = 1, 1000; each with γ = 1 and 0). */
import { readFileSync } from 'node:fs';

export interface FixtureRow {
  distribution: string;
  size: number;
  fixed: Record<string, number>;
  best: Record<string, { time: number; root: number }>;
}

export interface FixtureTable {
  table: number;
  alpha: number;
  beta: number;
  gamma: number;
  p: number;
  b: number;
  rho: number;
  fixedRoot: number;
  rows: FixtureRow[];
}

export const tables = JSON.parse(readFileSync(new URL('../fixtures/seed004-tables.json', import.meta.url), 'utf8')) as FixtureTable[];
