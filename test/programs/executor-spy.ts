/**
 * A spy on a world communicator's native schedule executor (Endpoint.bindSchedule), for the MPI
 * rank programs of the schedule tests: it counts the schedules of a kind (combines, streams)
 * the executor took and declined, and splits communicators off the world whose executor is the
 * spied one — or none (`portable`: the portable executor runs every schedule).
 */
import type { Communicator } from '../../src/comm/communicator.js';
import type { Endpoint } from '../../src/comm/endpoint.js';
import type { RankSchedule } from '../../src/comm/schedule.js';

type BindScheduleFn = NonNullable<Endpoint['bindSchedule']>;

export interface ExecutorSpy {
  /** Schedules of the kind bound by the native executor, and declined by it. */
  native: number;
  declined: number;
  /** A communicator split off the world (key: its rank order, default the world rank) with the spied executor, or none (`portable`). */
  split(portable: boolean, key?: number): Promise<Communicator>;
}

/** The world communicator's endpoint (the transports expose it as `endpoint`). */
export function endpointOf(world: Communicator): Endpoint {
  const ep = (world as unknown as { readonly endpoint?: Endpoint }).endpoint;
  if (ep === undefined) throw new Error('the world communicator shows no endpoint: cannot spy on its schedule executor');
  return ep;
}

/** Installs the spy on `world`'s endpoint; `counts` says which schedules are of the kind counted. */
export function spyOnExecutor(world: Communicator, counts: (schedule: RankSchedule) => boolean): ExecutorSpy {
  const ep = endpointOf(world);
  const original = ep.bindSchedule;
  const spy: ExecutorSpy = {
    native: 0,
    declined: 0,
    async split(portable: boolean, key = world.rank): Promise<Communicator> {
      const own = Object.getOwnPropertyDescriptor(ep, 'bindSchedule');
      const counted: BindScheduleFn | undefined =
        original === undefined
          ? undefined
          : (ctx, worldOf, schedule, buffers, options) => {
              const es = original.call(ep, ctx, worldOf, schedule, buffers, options);
              if (counts(schedule)) {
                if (es === undefined) spy.declined++;
                else spy.native++;
              }
              return es;
            };
      Object.defineProperty(ep, 'bindSchedule', { value: portable ? undefined : counted, configurable: true, writable: true });
      try {
        const c = await world.split(0, key);
        if (c === null) throw new Error('split');
        return c;
      } finally {
        if (own !== undefined) Object.defineProperty(ep, 'bindSchedule', own);
        else delete (ep as { bindSchedule?: unknown }).bindSchedule;
      }
    },
  };
  return spy;
}
