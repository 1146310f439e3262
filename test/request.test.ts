import { describe, expect, it } from 'vitest';
import { handled, mapRequest, OpRequest, Resumable, toPromise, waitAll, type Request } from '../src/comm/request.js';
import { rejection } from './helpers/errors.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Unhandled rejections raised while `body` runs (and two macrotask turns after it). */
async function unhandledDuring(body: () => Promise<void> | void): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onUnhandled = (e: unknown): void => {
    seen.push(e);
  };
  process.on('unhandledRejection', onUnhandled);
  try {
    await body();
    await tick();
    await tick();
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return seen;
}

describe('OpRequest', () => {
  it('settles once; resolve/reject report whether a continuation was scheduled', async () => {
    const a = new OpRequest<number>();
    expect(a.pending).toBe(true);
    expect(a.resolve(1)).toBe(false); // nobody waits
    expect(a.resolve(2)).toBe(false);
    expect(a.reject(new Error('late'))).toBe(false);
    expect(await a).toBe(1);

    const b = new OpRequest<number>();
    const got = b.then((v) => v * 10);
    expect(b.resolve(4)).toBe(true); // awaited: a reaction was scheduled
    expect(await got).toBe(40);

    const c = new OpRequest<number>();
    const w = waitAll([c]);
    expect(c.reject(new Error('boom'))).toBe(true); // its waitAll group rejects
    expect(await rejection(w)).toEqual(new Error('boom'));
  });

  it('a failed request nobody awaits raises no unhandled rejection', async () => {
    const seen = await unhandledDuring(() => {
      new OpRequest<void>().reject(new Error('ignored'));
      OpRequest.failed(new Error('ignored too'));
    });
    expect(seen).toEqual([]);
  });

  it('toPromise gives a native promise with the same outcome', async () => {
    expect(await toPromise(OpRequest.done(7))).toBe(7);
    expect(await rejection(toPromise(OpRequest.failed(new Error('x'))))).toEqual(new Error('x'));
    const p = new OpRequest<string>();
    const q = toPromise(p);
    expect(q).toBeInstanceOf(Promise);
    p.resolve('ok');
    expect(await q).toBe('ok');
  });
});

describe('waitAll', () => {
  it('resolves with the values in order, whatever the completion order, mixing promises', async () => {
    const a = new OpRequest<number>();
    const b = new OpRequest<number>();
    const w = waitAll<number>([a, Promise.resolve(2), b, OpRequest.done(4)]);
    b.resolve(3);
    a.resolve(1);
    expect(await w).toEqual([1, 2, 3, 4]);
    expect(await waitAll([])).toEqual([]);
  });

  it('rejects as soon as one fails, even while others are pending; later outcomes are ignored', async () => {
    const a = new OpRequest<number>();
    const b = new OpRequest<number>();
    const w = waitAll([a, b]);
    b.reject(new Error('first'));
    const e = await rejection(w);
    expect(e).toEqual(new Error('first'));
    expect(a.resolve(1)).toBe(false);
    expect(await rejection(waitAll([OpRequest.done(1), OpRequest.failed(new Error('now'))]))).toEqual(new Error('now'));
  });

  it('a request in two waitAll calls (and awaited) settles all of them', async () => {
    const a = new OpRequest<number>();
    const w1 = waitAll([a]);
    const w2 = waitAll([a, OpRequest.done(0)]);
    const direct = a.then((v) => v + 1);
    a.resolve(5);
    expect(await w1).toEqual([5]);
    expect(await w2).toEqual([5, 0]);
    expect(await direct).toBe(6);
  });

  it('does not read the array after the call (the caller may reuse it)', async () => {
    const a = new OpRequest<number>();
    const ops: PromiseLike<number>[] = [a];
    const w = waitAll(ops);
    ops[0] = OpRequest.done(99);
    a.resolve(1);
    expect(await w).toEqual([1]);
  });
});

describe('mapRequest', () => {
  it('maps values and errors, pending or settled, and turns a throwing map into a failure', async () => {
    const a = new OpRequest<number>();
    const m = mapRequest(a, (v) => v * 2);
    expect(m).toBeInstanceOf(OpRequest);
    a.resolve(21);
    expect(await m).toBe(42);
    expect(await mapRequest(OpRequest.done(1), (v) => v + 1)).toBe(2);
    const e = await rejection(mapRequest(OpRequest.failed<number>(new Error('in')), (v) => v, (x) => new Error(`mapped ${(x as Error).message}`)));
    expect(e).toEqual(new Error('mapped in'));
    const t = await rejection(
      mapRequest(OpRequest.done(1), () => {
        throw new Error('thrown');
      }),
    );
    expect(t).toEqual(new Error('thrown'));
    // Over a plain promise (fallback) and over a request that already has a waiter.
    expect(await mapRequest(Promise.resolve(3), (v) => v * 3)).toBe(9);
    const b = new OpRequest<number>();
    const inner = mapRequest(b, (v) => v + 1);
    const outer = mapRequest(b, (v) => v + 2);
    b.resolve(10);
    expect([await inner, await outer]).toEqual([11, 12]);
  });

  it('handled() keeps a plain promise that fails later from going unhandled', async () => {
    let p: PromiseLike<void> = Promise.resolve();
    const seen = await unhandledDuring(() => {
      let fail: (e: unknown) => void = () => undefined;
      p = handled(new Promise<void>((_, rej) => (fail = rej)));
      fail(new Error('later'));
    });
    expect(seen).toEqual([]);
    expect(await rejection(p)).toEqual(new Error('later'));
  });
});

/** A Resumable that logs its continuations (and, given `log`, into a log shared with promise reactions). */
class Logged extends Resumable {
  readonly seen: string[];
  constructor(seen: string[] = []) {
    super();
    this.seen = seen;
  }
  on(a: Request<unknown>, b?: Request<unknown>): void {
    this.wait(a, b);
  }
  onEach(reqs: readonly Request<unknown>[]): void {
    this.waitEach(reqs);
  }
  value(): unknown {
    return this.waitedValue();
  }
  protected resume(): void {
    this.seen.push(`done ${String(this.waitedValue())}`);
  }
  protected resumeFailed(e: unknown): void {
    this.seen.push(`failed ${(e as Error).message}`);
  }
}

describe('Resumable', () => {
  it('resumes once, after the last of its requests, with no promise on them, in the microtask turn waitAll(...).then would', async () => {
    const seen: string[] = [];
    const m = new Logged(seen);
    const recv = new OpRequest<number>();
    const send = new OpRequest<void>();
    m.on(recv, send);
    expect(recv.waiter).toBe(m);
    expect(send.waiter).toBe(m);
    // the same completions drive a waitAll side by side: both continuations in the same order of turns
    const r2 = new OpRequest<number>();
    const s2 = new OpRequest<void>();
    void waitAll<unknown>([r2, s2]).then(() => seen.push('waitAll'));
    expect(recv.resolve(7)).toBe(false); // one still pending: nothing scheduled
    r2.resolve(7);
    expect(send.resolve(undefined)).toBe(true);
    s2.resolve(undefined);
    await Promise.resolve();
    expect(seen).toEqual(['done 7', 'waitAll']);
    await tick();
    expect(seen).toEqual(['done 7', 'waitAll']);
  });

  it('fails as soon as one request fails, once; the other request is released and the machine can wait again', async () => {
    const m = new Logged();
    const a = new OpRequest<number>();
    const b = new OpRequest<void>();
    m.on(a, b);
    expect(b.reject(new Error('lost'))).toBe(true);
    expect(a.waiter).toBe(null);
    a.resolve(1);
    await tick();
    expect(m.seen).toEqual(['failed lost']);
    const c = new OpRequest<number>();
    m.on(c);
    c.resolve(5);
    await tick();
    expect(m.seen).toEqual(['failed lost', 'done 5']);
  });

  it('takes requests already settled, plain promises and requests somebody else waits on (through their promises)', async () => {
    const m = new Logged();
    m.on(OpRequest.done(3));
    await tick();
    m.on(OpRequest.failed(new Error('early')), new OpRequest<void>());
    await tick();
    const taken = new OpRequest<number>();
    const before = waitAll([taken]);
    m.on(taken, Promise.resolve());
    taken.resolve(9);
    await tick();
    m.on(Promise.resolve(4));
    await tick();
    m.on(Promise.reject(new Error('plain')));
    await tick();
    m.onEach([]);
    await tick();
    const x = new OpRequest<number>();
    const y = new OpRequest<number>();
    m.onEach([x, y]);
    y.resolve(2);
    x.resolve(1);
    await tick();
    expect(m.seen).toEqual(['done 3', 'failed early', 'done 9', 'done 4', 'failed plain', 'done undefined', 'done 1']);
    expect(await before).toEqual([9]);
  });
});
