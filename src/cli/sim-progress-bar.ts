/**
 * The progress line of `vcoll run --transport sim` on stderr: the simulator's SimProgress
 * (ranks done, virtual time, messages, wall time) on one line, redrawn in place with `\r`,
 * from the first report after `afterMs` of wall time (short runs print nothing), ended with a
 * newline when the run ends or fails.
 */
import type { SimProgress } from '../transports/sim/index.js';

/** Where the line goes (process.stderr, or a test's sink). */
export interface ProgressStream {
  write(s: string): boolean;
  readonly isTTY?: boolean;
  /** Terminal width (a TTY's): the line is kept shorter so that `\r` redraws it in place. */
  readonly columns?: number;
}

/** Wall time (ms) of a run before the line is drawn. */
export const PROGRESS_AFTER_MS = 1000;

const int = (n: number): string => n.toLocaleString('en-US');

/** A virtual time, short: 4 significant digits, exponent form (1.23e7) from 1e5 on. */
export function formatSimTime(t: number): string {
  if (!Number.isFinite(t) || t === 0) return String(t);
  if (Math.abs(t) >= 1e5) return t.toExponential(2).replace('e+', 'e');
  return String(Number(t.toPrecision(4)));
}

/**
 * The line: `[sim] p=1048576  ranks done 412,331/1,048,576 (39%)  t=1.23e7  msgs 412,330  12.4 s`,
 * during the start-up `[sim] p=1048576  starting ranks 262,144/1,048,576 (25%)  3.1 s`;
 * `compact` without the prefix.
 */
export function simProgressLine(p: SimProgress, compact = false): string {
  const percent = (n: number): number => (p.ranks > 0 ? Math.floor((100 * n) / p.ranks) : 100);
  const wall = `${(p.wallMs / 1000).toFixed(1)} s`;
  const body =
    p.ranksStarted < p.ranks
      ? `starting ranks ${int(p.ranksStarted)}/${int(p.ranks)} (${percent(p.ranksStarted)}%)  ${wall}`
      : `ranks done ${int(p.ranksDone)}/${int(p.ranks)} (${percent(p.ranksDone)}%)  t=${formatSimTime(p.time)}  msgs ${int(p.messages)}  ${wall}`;
  return compact ? body : `[sim] p=${p.ranks}  ${body}`;
}

export class SimProgressBar {
  /** Length of the line last drawn (0: nothing drawn yet). */
  private drawn = 0;
  private ended = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly afterMs = PROGRESS_AFTER_MS,
  ) {}

  /** The simulator's callback (SimOptions.progress, job.ts onProgress). */
  readonly update = (p: SimProgress): void => {
    if (this.ended || (this.drawn === 0 && p.wallMs < this.afterMs)) return;
    let line = simProgressLine(p);
    if (this.stream.isTTY === true) {
      // a line as wide as the terminal wraps, and `\r` would redraw only its last row
      const cols = this.stream.columns;
      if (cols !== undefined && cols > 1 && line.length >= cols) {
        line = simProgressLine(p, true);
        if (line.length >= cols) line = line.slice(0, cols - 1);
      }
      this.stream.write(`\r${line}\x1b[K`);
    } else {
      // no terminal to clear the rest of the line: pad over the previous one
      this.stream.write(`\r${line.padEnd(this.drawn)}`);
    }
    this.drawn = Math.max(line.length, 1);
  };

  /** Ends the line with a newline if one was drawn; later updates draw nothing. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.drawn > 0) this.stream.write('\n');
  }
}
