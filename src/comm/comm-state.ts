/**
 * Per-communicator sequence numbers of the collectives: calls (their tag slots), plans (their
 * data tags) and adaptive plans (their tag blocks), which every rank advances in the same order
 * (MPI's rule for collective calls). They are kept on the communicator object itself when it is
 * one of vcoll's (a field of PointToPointBase and of call scopes), else in a WeakMap: a
 * simulation makes a communicator per rank, and a WeakMap of a million keys costs the garbage
 * collector (an ephemeron table, walked at every full collection) and a hash lookup per call.
 */
export class CommState {
  /** collectives/call-scope.ts: the next call number (a record a persistent scope keeps). */
  calls: { n: number } | undefined = undefined;
  /** collectives/node-schedule.ts nextDataTag: plans made. */
  plans = 0;
  /** collectives/adaptive/tags.ts: adaptive plans made. */
  adaptivePlans = 0;
}

/** What holds its own CommState (null until first needed). */
export interface CommStateHolder {
  commState: CommState | null;
}

const others = new WeakMap<object, CommState>();

/** The sequence numbers of `comm` (made on first use). */
export function commState(comm: object): CommState {
  const holder = comm as Partial<CommStateHolder>;
  if (holder.commState !== undefined) return (holder.commState ??= new CommState());
  let s = others.get(comm);
  if (s === undefined) {
    s = new CommState();
    others.set(comm, s);
  }
  return s;
}
