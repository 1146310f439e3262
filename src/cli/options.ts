/** Parsing of CLI option values into validated numbers, with errors that name the option. */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InvalidArgumentError } from '../errors.js';

export function parseNumberOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x)) throw new InvalidArgumentError(`--${name}`, `must be a number, got "${v}"`);
    if (x < min) throw new InvalidArgumentError(`--${name}`, `must be >= ${min}, got ${x}`);
    return x;
  };
}

export function parseIntegerOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const x = parseNumberOption(name, min)(v);
    if (!Number.isInteger(x)) throw new InvalidArgumentError(`--${name}`, `must be an integer, got "${v}"`);
    return x;
  };
}

/** A comma list of integers >= min (e.g. `--sizes 1,2,3`); an entry's error names the option. */
export function parseIntegerListOption(name: string, min = 0): (v: string) => number[] {
  const one = parseIntegerOption(name, min);
  return (v: string) => v.split(',').map((s) => one(s.trim()));
}

export function parseSizesOption(v: string): number[] {
  const parts = v.split(',').map((s) => s.trim());
  return parts.map((s, i) => {
    const x = Number(s);
    if (s === '' || !Number.isInteger(x) || x < 0) throw new InvalidArgumentError(`--sizes[${i}]`, `must be a non-negative integer, got "${s}"`);
    return x;
  });
}

export function parseChoice<T extends string>(name: string, choices: readonly T[]): (v: string) => T {
  return (v: string) => {
    if ((choices as readonly string[]).includes(v)) return v as T;
    throw new InvalidArgumentError(`--${name}`, `must be one of ${choices.join(', ')}, got "${v}"`);
  };
}

/**
 * Fails before any work when `path` cannot be written: its folder must exist and be writable,
 * and the path must not be a folder (nothing is created). `option` names the flag, e.g. `--json`.
 */
export function checkOutputPath(option: string, path: string): void {
  try {
    if (existsSync(path)) {
      if (statSync(path).isDirectory()) throw new Error('it is a directory');
      accessSync(path, constants.W_OK);
    } else {
      const dir = dirname(resolve(path));
      if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
      accessSync(dir, constants.W_OK);
    }
  } catch (e) {
    throw new InvalidArgumentError(option, `cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
