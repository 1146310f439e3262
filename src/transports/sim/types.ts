/** Public types of the virtual-time simulator (see sim.ts for the semantics). */
import type { Communicator } from '../../comm/communicator.js';
import type { CostModel } from '../../model/cost-model.js';

/**
 * Port model: 'one-ported' (one transfer at a time, send or receive), 'full-duplex' (one send
 * and one receive at a time) or k half-duplex ports (k transfers at a time, any direction).
 */
export type PortSetting = 'one-ported' | 'full-duplex' | number;

export interface SimOptions {
  readonly model: CostModel;
  /** Port model; default `model.ports` half-duplex ports (1 = one-ported). */
  readonly ports?: PortSetting;
  /** Bytes per model unit (default 1): a message of n bytes costs model.comm(s, d, n / unitBytes). */
  readonly unitBytes?: number;
  /** Record every message and copy. */
  readonly trace?: boolean;
  /**
   * Called with the run's progress about every `progressEveryMs` of wall time and once when
   * the run completes (not when it fails). It is checked by the run loop (between virtual
   * times, and when it waits for the rank programs), so there is no call while the programs
   * themselves run: at large p their start-up is one such stretch of seconds. An observer: it
   * changes no virtual time or order; it must not call into the simulation. What it throws
   * fails the run. runSim only (replaySchedule ignores it).
   */
  readonly progress?: (p: SimProgress) => void;
  /** Wall time (ms, >= 0) between calls of `progress` (default 250; 0: at every check). */
  readonly progressEveryMs?: number;
}

/** What `SimOptions.progress` is given: where the run is. */
export interface SimProgress {
  /** Virtual time reached (model units); at the final call, the run's time. */
  time: number;
  /** Messages completed so far (0-byte ones and messages to oneself included). */
  messages: number;
  /** Bytes moved by those messages. */
  bytes: number;
  /** Ranks whose program has returned. */
  ranksDone: number;
  /**
   * Ranks whose program has started (all of them, once the run is past its start-up: every
   * program starts at virtual time 0, in rank order, before virtual time moves; at millions of
   * ranks that takes seconds, reported as it goes).
   */
  ranksStarted: number;
  /** p. */
  ranks: number;
  /** Wall time since the run started (ms). */
  wallMs: number;
}

export interface SimMessageRecord {
  from: number;
  to: number;
  /** Communication context (0: the world communicator). */
  ctx: number;
  tag: number;
  bytes: number;
  start: number;
  end: number;
}

export interface SimCopyRecord {
  rank: number;
  bytes: number;
  start: number;
  end: number;
}

export interface SimTrace {
  /** Every completed message in completion order (messages to oneself included). */
  messages: SimMessageRecord[];
  /** Every `copy` call (the processor's own copies). */
  copies: SimCopyRecord[];
}

export interface SimResult<T> {
  /** Max over ranks of their final virtual clock. */
  time: number;
  /** Final virtual clock of every rank. */
  finish: number[];
  /** What every rank's program returned. */
  results: T[];
  /** Completed point-to-point messages (0-byte ones and messages to oneself included). */
  messages: number;
  /** Bytes moved by those messages. */
  bytes: number;
  trace?: SimTrace;
}

export type RankProgram<T> = (comm: Communicator) => Promise<T>;
