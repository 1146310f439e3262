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
