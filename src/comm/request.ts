/**
 * Non-blocking operations as *requests* (MPI_Request): `isend`/`irecv` return a `Request`,
 * something to await or to pass to `waitAll`. A request is a thenable, not a promise: a
 * transport creates the promise only when somebody awaits the request (`then`), and `waitAll`
 * over the transports' own requests (`OpRequest`) counts completions with no promise per
 * operation — one promise per `waitAll`. That is what lets the simulator run 10⁶ messages a
 * second (a promise per operation costs more than the whole simulated message) and lets it
 * know exactly which rank programs an event wakes (`OpRequest.resolve` says whether a
 * continuation was scheduled), so it only yields to the event loop when one was.
 *
 * Any PromiseLike (e.g. a promise from an async helper) is a valid Request too, so wrappers
 * may return promises; `waitAll` accepts a mix.
 *
 * Failure semantics: a failed request that nobody awaits raises no unhandled rejection (no
 * promise exists); awaiting it, or a `waitAll` containing it, rejects with its error.
 */

/** A started non-blocking operation: await it, or pass it to `waitAll`. */
export type Request<T> = PromiseLike<T>;

const PENDING = 0;
const DONE = 1;
const FAILED = 2;

/** Who is told when a request settles (a waitAll group, a derived request). */
export interface Waiter {
  /** Called once, when `req` settles; returns whether a JS continuation was scheduled. */
  settled(req: OpRequest<unknown>): boolean;
}

// One executor for every promise (no closure per request).
let capturedResolve: (v: unknown) => void = () => undefined;
let capturedReject: (e: unknown) => void = () => undefined;
function capture(res: (v: never) => void, rej: (e: unknown) => void): void {
  capturedResolve = res as (v: unknown) => void;
  capturedReject = rej;
}

/**
 * A transport's request. The transport calls `resolve`/`reject` exactly once; each returns
 * whether that scheduled JS work (a promise reaction or a waiter's), i.e. whether a rank
 * program may now run.
 */
export class OpRequest<T> implements PromiseLike<T> {
  // Three fields only (requests are allocated per operation: small objects keep the
  // collector cheap): the state, the value or the error, and who waits (a waitAll group, a
  // derived request, or the promise made by `then`, chained).
  private state = PENDING;
  private out: unknown = undefined;
  /** At most one waiter (waitAll sets it on requests that have none). */
  waiter: Waiter | null = null;

  /** A request that has already completed with `value`. */
  static done<T>(value: T): OpRequest<T> {
    const r = new OpRequest<T>();
    r.state = DONE;
    r.out = value;
    return r;
  }

  /** A request that has already failed with `error`. */
  static failed<T>(error: unknown): OpRequest<T> {
    const r = new OpRequest<T>();
    r.state = FAILED;
    r.out = error;
    return r;
  }

  get pending(): boolean {
    return this.state === PENDING;
  }

  get failed(): boolean {
    return this.state === FAILED;
  }

  /** The value of a completed request (undefined before). */
  get value(): T | undefined {
    return this.state === DONE ? (this.out as T) : undefined;
  }

  /** The error of a failed request (undefined otherwise). */
  get reason(): unknown {
    return this.state === FAILED ? this.out : undefined;
  }

  /** Completes the request; returns whether a continuation was scheduled. */
  resolve(value: T): boolean {
    return this.settle(DONE, value);
  }

  /** Fails the request; returns whether a continuation was scheduled. */
  reject(error: unknown): boolean {
    return this.settle(FAILED, error);
  }

  private settle(state: number, out: unknown): boolean {
    if (this.state !== PENDING) return false;
    this.state = state;
    this.out = out;
    const w = this.waiter;
    if (w === null) return false;
    this.waiter = null;
    return w.settled(this as OpRequest<unknown>);
  }

  /** The request as a promise (one per request while pending; a new settled one after). */
  asPromise(): Promise<T> {
    if (this.state === DONE) return (this.out === undefined ? SETTLED_UNDEFINED : Promise.resolve(this.out)) as Promise<T>;
    if (this.state === FAILED) return Promise.reject(this.out);
    const w = this.waiter;
    if (w instanceof PromiseWaiter) return w.promise as Promise<T>;
    const pw = new PromiseWaiter(w);
    this.waiter = pw;
    return pw.promise as Promise<T>;
  }

  then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.asPromise().then(onfulfilled, onrejected);
  }
}

/** One settled promise for every completed request without a value (sends): no allocation. */
const SETTLED_UNDEFINED: Promise<undefined> = Promise.resolve(undefined);

/** The promise of a pending request that somebody awaited, before any earlier waiter. */
class PromiseWaiter implements Waiter {
  readonly promise: Promise<unknown>;
  private readonly res: (v: unknown) => void;
  private readonly rej: (e: unknown) => void;

  constructor(private readonly next: Waiter | null) {
    this.promise = new Promise(capture);
    this.res = capturedResolve;
    this.rej = capturedReject;
  }

  settled(req: OpRequest<unknown>): boolean {
    if (req.failed) this.rej(req.reason);
    else this.res(req.value);
    if (this.next !== null) this.next.settled(req);
    return true;
  }
}

const noop = (): void => undefined;

/**
 * Marks a request whose failure is observed later (awaited after others, or in a final
 * waitAll) so it raises no unhandled rejection meanwhile. Free for OpRequests, which never do.
 */
export function handled<T>(req: Request<T>): Request<T> {
  if (!(req instanceof OpRequest)) req.then(undefined, noop);
  return req;
}

/** The request as a native promise (what blocking `send`/`recv` return: one tick per await). */
export function toPromise<T>(req: Request<T>): Promise<T> {
  if (req instanceof OpRequest) return (req as OpRequest<T>).asPromise();
  return req instanceof Promise ? (req as Promise<T>) : Promise.resolve(req);
}

/**
 * A request derived from another by a function of its value (e.g. a receive's status with
 * the source translated to a sub-communicator's rank), and optionally of its error. If `map`
 * throws, the derived request fails with what it threw. No promise per operation either.
 */
export class MappedRequest<S, T> extends OpRequest<T> implements Waiter {
  constructor(
    private readonly map: (value: S) => T,
    private readonly mapError: ((error: unknown) => unknown) | undefined,
  ) {
    super();
  }

  settled(req: OpRequest<unknown>): boolean {
    if (req.failed) return this.reject(this.mapError === undefined ? req.reason : this.mapError(req.reason));
    let v: T;
    try {
      v = this.map(req.value as S);
    } catch (e) {
      return this.reject(e);
    }
    return this.resolve(v);
  }
}

/**
 * The request `inner` with its value passed through `map` (and its error through `mapError`);
 * falls back to a promise when `inner` is not an OpRequest or already has a waiter.
 */
export function mapRequest<S, T>(inner: Request<S>, map: (value: S) => T, mapError?: (error: unknown) => unknown): Request<T> {
  if (inner instanceof OpRequest) {
    const req = inner as OpRequest<S>;
    if (req.waiter === null) {
      const out = new MappedRequest<S, T>(map, mapError);
      if (req.pending) req.waiter = out;
      else out.settled(req as OpRequest<unknown>);
      return out;
    }
  }
  return inner.then(
    map,
    mapError === undefined
      ? undefined
      : (e: unknown) => {
          throw mapError(e);
        },
  );
}

class WaitGroup<T> implements Waiter {
  private left: number;
  private over = false;
  private readonly res: (v: T[]) => void;
  private readonly rej: (e: unknown) => void;
  readonly promise: Promise<T[]>;

  constructor(
    private readonly reqs: Request<T>[],
    left: number,
  ) {
    this.left = left;
    this.promise = new Promise<T[]>(capture);
    this.res = capturedResolve as (v: T[]) => void;
    this.rej = capturedReject;
  }

  settled(req: OpRequest<unknown>): boolean {
    if (this.over) return false;
    if (req.failed) return this.fail(req.reason);
    if (--this.left > 0) return false;
    this.over = true;
    this.res(valuesOf(this.reqs));
    return true;
  }

  // Methods, not arrow fields: no closures per group (the fallback below makes its own).
  one(): void {
    if (this.over || --this.left > 0) return;
    this.over = true;
    this.res(valuesOf(this.reqs));
  }

  fail(e: unknown): boolean {
    if (this.over) return false;
    this.over = true;
    this.rej(e);
    return true;
  }
}

// Values of settled requests, in order (every request is an OpRequest that completed or a
// PromiseLike whose value was recorded by `waitAll`'s fallback).
let fallbackValues: WeakMap<object, unknown> | undefined;

// `reqs` is waitAll's own copy of the caller's array: its entries are replaced by the values
// in place (no second array per waitAll).
function valuesOf<T>(reqs: Request<T>[]): T[] {
  const out = reqs as unknown[];
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i];
    out[i] = r instanceof OpRequest ? r.value : fallbackValues?.get(r);
  }
  return out as T[];
}

/**
 * Waits for every request; resolves with their values in order, rejects as soon as one fails
 * (MPI_Waitall). One promise in all when the requests are the transports' own.
 */
export function waitAll<T>(ops: readonly Request<T>[]): Promise<T[]> {
  const reqs = ops.slice();
  let left = 0;
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i];
    if (r instanceof OpRequest) {
      if (r.failed) return Promise.reject(r.reason);
      if (r.pending) left++;
    } else left++;
  }
  if (left === 0) return Promise.resolve(valuesOf(reqs));
  const group = new WaitGroup<T>(reqs, left);
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i];
    if (r instanceof OpRequest) {
      if (!r.pending) continue;
      if (r.waiter === null) {
        r.waiter = group;
        continue;
      }
    }
    const values = (fallbackValues ??= new WeakMap());
    r.then(
      (v) => {
        values.set(r, v);
        group.one();
      },
      (e: unknown) => void group.fail(e),
    );
  }
  return group.promise;
}

/**
 * Runs `op` on every item in order with at most `window` operations outstanding: item j
 * starts once fewer than `window` of the earlier ones are unfinished (the evaluator's k-port
 * rule, docs/MODEL.md "Ports": the collectives' k ports, a schedule step's window); rejects
 * with the first failure.
 */
export function inOrder<T>(items: readonly T[], window: number, op: (x: T, index: number) => PromiseLike<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = 0;
    let running = 0;
    let done = 0;
    let failed = false;
    const launch = (): void => {
      while (!failed && running < window && next < items.length) {
        running++;
        op(items[next], next++).then(
          () => {
            running--;
            if (++done === items.length) resolve();
            else launch();
          },
          (e: unknown) => {
            failed = true;
            reject(e);
          },
        );
      }
    };
    if (items.length === 0) resolve();
    else launch();
  });
}

/**
 * A callback state machine that waits on requests: `wait(a, b)` then `resume()` — or
 * `resumeFailed(error)` as soon as one fails — exactly one microtask turn after the last of
 * them settles, as `waitAll([a, b]).then(resume, resumeFailed)` would run them, but with no
 * promise, group or array per wait when the requests are the transport's own (an OpRequest
 * without another waiter): the machine is their waiter. A simulation holds one such machine
 * per rank and each waits many times, so what a wait allocates is what the collector copies.
 * One wait at a time.
 */
export abstract class Resumable implements Waiter {
  private wLeft = 0;
  private wOver = true;
  private wBroken = false;
  private wError: unknown = undefined;
  /** The last wait's requests, and the first one's value when it is not an OpRequest. */
  private wFirst: Request<unknown> | undefined = undefined;
  private wSecond: Request<unknown> | undefined = undefined;
  private wAll: readonly Request<unknown>[] | undefined = undefined;
  private wFirstValue: unknown = undefined;
  private readonly wFire = (): void => {
    if (this.wBroken) this.resumeFailed(this.wError);
    else this.resume();
  };

  /** The last wait ended: every request completed. */
  protected abstract resume(): void;
  /** One request of the last wait failed. */
  protected abstract resumeFailed(error: unknown): void;

  /** Waits for `a` (and `b`). */
  protected wait(a: Request<unknown>, b?: Request<unknown>): void {
    this.wBegin(a, b, undefined);
    this.wAdd(a, true);
    if (b !== undefined && !this.wOver) this.wAdd(b, false);
    this.wEnd();
  }

  /** Waits for every request of `reqs` (possibly none). */
  protected waitEach(reqs: readonly Request<unknown>[]): void {
    this.wBegin(reqs[0], undefined, reqs);
    for (let i = 0; i < reqs.length && !this.wOver; i++) this.wAdd(reqs[i], i === 0);
    this.wEnd();
  }

  /** The value of the first request of the last wait (e.g. a receive's Status), once resumed. */
  protected waitedValue<T>(): T {
    const a = this.wFirst;
    return (a instanceof OpRequest ? a.value : this.wFirstValue) as T;
  }

  private wBegin(a: Request<unknown> | undefined, b: Request<unknown> | undefined, all: readonly Request<unknown>[] | undefined): void {
    this.wOver = false;
    this.wBroken = false;
    this.wError = undefined;
    this.wFirst = a;
    this.wSecond = b;
    this.wAll = all;
    this.wFirstValue = undefined;
    this.wLeft = 1; // held while the requests are registered
  }

  private wEnd(): void {
    if (!this.wOver && --this.wLeft === 0) this.wReady();
  }

  private wAdd(r: Request<unknown>, first: boolean): void {
    if (r instanceof OpRequest) {
      if (r.failed) {
        this.wFail(r.reason);
        return;
      }
      if (!r.pending) return;
      if (r.waiter === null) {
        r.waiter = this;
        this.wLeft++;
        return;
      }
    }
    // another kind of request, or one somebody else already waits on: through its promise
    this.wLeft++;
    r.then(
      (v) => {
        if (first) this.wFirstValue = v;
        if (!this.wOver && --this.wLeft === 0) this.wReady();
      },
      (e: unknown) => void this.wFail(e),
    );
  }

  settled(req: OpRequest<unknown>): boolean {
    if (this.wOver) return false;
    if (req.failed) return this.wFail(req.reason);
    if (--this.wLeft > 0) return false;
    this.wReady();
    return true;
  }

  private wReady(): void {
    this.wOver = true;
    void SETTLED_UNDEFINED.then(this.wFire);
  }

  private wFail(e: unknown): boolean {
    if (this.wOver) return false;
    this.wOver = true;
    this.wBroken = true;
    this.wError = e;
    // the other requests no longer report here: the machine may wait again
    this.wRelease(this.wFirst);
    this.wRelease(this.wSecond);
    const all = this.wAll;
    if (all !== undefined) for (let i = 0; i < all.length; i++) this.wRelease(all[i]);
    void SETTLED_UNDEFINED.then(this.wFire);
    return true;
  }

  private wRelease(r: Request<unknown> | undefined): void {
    if (r instanceof OpRequest && r.waiter === this) r.waiter = null;
  }
}
