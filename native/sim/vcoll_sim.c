/*
 * The simulator's whole-schedule replay in C (src/transports/sim/replay.ts, whose loop this is,
 * rule for rule and in the same order: the JavaScript file is the specification and the tests
 * compare the two). It runs on the replay's own typed arrays — operation blocks, rank blocks,
 * steps, channels, the byte arena — so JavaScript lays the schedule out, resets it, calls
 * `replay(...)` once per run and reads the clocks and counters back; the event queue, the
 * candidate heap, the waiting transfers and the ready queue live here for the call.
 *
 * The cost models it evaluates are the library's own three (src/model/cost-model.ts: linear,
 * per pair, hierarchical), with their formulas in the same floating-point operations (compiled
 * with -ffp-contract=off: no fused multiply-add), so the virtual times are the same to the
 * last bit. What it does not do (the JavaScript loop does): combines with data, messages of
 * several ranges with data. Steps with concurrent streams it runs as replay.ts does (`sm`,
 * E_STREAM, E_AFTER, ST_STREAM, a negative ST_WINDOW; continuations C_SOP carry the
 * operation, not the rank).
 */
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- layout (replay.ts) -------------------------------------------------------------- */
#define I 16
#define E_KIND 0
#define E_RANK 1
#define E_PEER 2
#define E_LEN 3
#define E_PARTNER 4
#define E_QPREV 5
#define E_QNEXT 6
#define E_STREAM 7
#define E_AFTER 8
#define E_STATE 9
#define S_CUR 10
#define DONE (-1)
#define E_OFF 11
#define F_SEQ 6
#define F_START 7
#define IDLE (-1)
#define STARTED (-2)
#define POSTED (-3)

#define K_SEND 0
#define K_RECV 1
#define K_COPY 2
#define K_PORT 3
#define K_COMBINE 4
#define K_PORT_SEND 5

#define Q 16
#define Q_STEP 0
#define Q_LO 1
#define Q_HI 2
#define Q_NEXT 3
#define Q_RUNNING 4
#define Q_DONE 5
#define Q_UNFINISHED 6
#define Q_FLAGS 7
#define Q_WSIZE 8
#define Q_RUNS 9
#define Q_BUSY_S 10
#define Q_BUSY_R 11
#define Q_PHEAD 12
#define Q_PTAIL 13
#define R_CLOCK 7
#define ISSUING 1
#define WINDOWED 2
#define DIRTY 4
#define STREAMED 8

#define ST_LO 0
#define ST_WINDOW 1
#define ST_REQS 2
#define ST_STREAM 3

#define SM 4
#define SM_START 0
#define SM_END 1
#define SM_NEXT 2
#define SM_RUNNING 3

#define C_OP 0
#define C_STEP 1
#define C_SOP 2
#define LOOP_COPY 8

/* params (replay.ts nativeParams) */
enum { P_P, P_N, P_K, P_DUPLEX, P_UNIT, P_DATA, P_RUNS, P_MODEL, P_ALPHA, P_BETA, P_GAMMA, P_IA, P_IB, P_EA, P_EB, P_TRACE, P_COUNT };
/* model kinds */
enum { M_LINEAR = 0, M_PAIRWISE = 1, M_HIERARCHICAL = 2 };
/* out */
enum { O_MESSAGES, O_BYTES, O_NOW, O_LIVE, O_FINISHED, O_COUNT };

/* A binary min-heap keyed by (a, b), items int32 (sim/int-heap.ts IntKeyHeap). */
typedef struct {
  double *ka, *kb;
  int32_t *items;
  int64_t size, cap;
} Heap;

typedef struct {
  /* the replay's arrays */
  int32_t *io;
  double *fo;
  int32_t *ro;
  double *rf;
  const int32_t *st;
  const int32_t *stepBase;
  int32_t *sm;
  const int32_t *pieceLo, *pieceDst, *pieceSrc, *pieceLen;
  const uint8_t *pieceShort;
  uint8_t *mem;
  /* parameters */
  int32_t p, n, k;
  int duplex, data, model;
  double unit, alpha, beta, gamma, ia, ib, ea, eb;
  const int32_t *node;
  const double *ma, *mb, *mg;
  /* state */
  Heap heap;
  double laneT;
  double *laneS;
  int32_t *lane;
  int64_t laneHead, laneTail, laneCap;
  Heap cand;
  int32_t *dirty;
  int32_t nDirty;
  int32_t *wOps, *wFrom, *wTo;
  int64_t wLen, wCap, nWaiting;
  int32_t *ready;
  int64_t readyHead, readyTail, readyCap;
  int32_t *restart;
  int64_t restartHead, restartCount;
  double evSeq, matchSeq, now, live, messages, bytes;
  int64_t finished;
  int oom;
  /* the trace: per message (from, to, schedule operation of the send, bytes, start, end), per copy (rank, bytes, start, end) */
  int tracing;
  double *tm, *tc;
  int64_t tmLen, tmCap, tcLen, tcCap;
} Sim;

static void record(Sim *s, double **a, int64_t *len, int64_t *cap, int width, const double *x) {
  if (*len + width > *cap) {
    int64_t c = *cap == 0 ? 1024 : 2 * *cap;
    double *b = realloc(*a, c * sizeof(double));
    if (b == NULL) {
      s->oom = 1;
      return;
    }
    *a = b;
    *cap = c;
  }
  memcpy(*a + *len, x, width * sizeof(double));
  *len += width;
}

/* --- memory --------------------------------------------------------------------------- */

static void *grow(Sim *s, void *p, size_t bytes) {
  void *q = realloc(p, bytes);
  if (q == NULL) s->oom = 1;
  return q;
}

static void heapInit(Heap *h) {
  h->size = 0;
  h->cap = 0;
  h->ka = h->kb = NULL;
  h->items = NULL;
}

static void heapFree(Heap *h) {
  free(h->ka);
  free(h->kb);
  free(h->items);
}

static void heapPush(Sim *s, Heap *h, double a, double b, int32_t x) {
  if (h->size == h->cap) {
    int64_t cap = h->cap == 0 ? 256 : 2 * h->cap;
    double *ka = grow(s, h->ka, cap * sizeof(double));
    if (ka != NULL) h->ka = ka;
    double *kb = grow(s, h->kb, cap * sizeof(double));
    if (kb != NULL) h->kb = kb;
    int32_t *it = grow(s, h->items, cap * sizeof(int32_t));
    if (it != NULL) h->items = it;
    if (s->oom) return;
    h->cap = cap;
  }
  int64_t i = h->size++;
  double *ka = h->ka, *kb = h->kb;
  int32_t *items = h->items;
  while (i > 0) {
    int64_t parent = (i - 1) >> 1;
    double pa = ka[parent];
    if (pa < a || (pa == a && kb[parent] < b)) break;
    ka[i] = pa;
    kb[i] = kb[parent];
    items[i] = items[parent];
    i = parent;
  }
  ka[i] = a;
  kb[i] = b;
  items[i] = x;
}

static int32_t heapPop(Heap *h) {
  double *ka = h->ka, *kb = h->kb;
  int32_t *items = h->items;
  int32_t top = items[0];
  int64_t m = --h->size;
  double a = ka[m], b = kb[m];
  int32_t x = items[m];
  if (m == 0) return top;
  int64_t i = 0;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= m) break;
    int64_t r = c + 1;
    if (r < m && (ka[r] < ka[c] || (ka[r] == ka[c] && kb[r] < kb[c]))) c = r;
    if (a < ka[c] || (a == ka[c] && b < kb[c])) break;
    ka[i] = ka[c];
    kb[i] = kb[c];
    items[i] = items[c];
    i = c;
  }
  ka[i] = a;
  kb[i] = b;
  items[i] = x;
  return top;
}

/* --- the event queue (sim/int-heap.ts IntEventQueue): a heap and a FIFO lane ------------ */

static int64_t evSize(Sim *s) { return s->heap.size + s->laneTail - s->laneHead; }

static double evTopT(Sim *s) {
  if (s->laneHead == s->laneTail) return s->heap.ka[0];
  if (s->heap.size == 0) return s->laneT;
  double h = s->heap.ka[0];
  return h < s->laneT ? h : s->laneT;
}

static void evPush(Sim *s, double t, double seq, int32_t x) {
  if (s->laneHead == s->laneTail) {
    s->laneHead = s->laneTail = 0;
    s->laneT = t;
  } else if (t != s->laneT) {
    heapPush(s, &s->heap, t, seq, x);
    return;
  }
  if (s->laneTail == s->laneCap) {
    int64_t cap = s->laneCap == 0 ? 256 : 2 * s->laneCap;
    double *ls = grow(s, s->laneS, cap * sizeof(double));
    if (ls != NULL) s->laneS = ls;
    int32_t *l = grow(s, s->lane, cap * sizeof(int32_t));
    if (l != NULL) s->lane = l;
    if (s->oom) return;
    s->laneCap = cap;
  }
  s->laneS[s->laneTail] = seq;
  s->lane[s->laneTail++] = x;
}

static int32_t evPop(Sim *s) {
  if (s->laneHead < s->laneTail) {
    Heap *h = &s->heap;
    if (h->size == 0 || s->laneT < h->ka[0] || (s->laneT == h->ka[0] && s->laneS[s->laneHead] < h->kb[0])) return s->lane[s->laneHead++];
  }
  return heapPop(&s->heap);
}

/* --- the cost model --------------------------------------------------------------------- */

static double comm(Sim *s, int32_t from, int32_t to, double units) {
  switch (s->model) {
    case M_PAIRWISE: {
      if (units <= 0) return 0;
      int64_t k = (int64_t)from * s->p + to;
      return s->ma[k] + s->mb[k] * units;
    }
    case M_HIERARCHICAL:
      if (units <= 0) return 0;
      return s->node[from] == s->node[to] ? s->ia + s->ib * units : s->ea + s->eb * units;
    default:
      return units > 0 ? s->alpha + s->beta * units : 0;
  }
}

static double copyCost(Sim *s, int32_t rank, double units) {
  return s->model == M_PAIRWISE ? s->mg[rank] * units : s->gamma * units;
}

/* --- the executor (replay.ts "the executor") -------------------------------------------- */

static void nextStep(Sim *s, int32_t r);
static void startStreams(Sim *s, int32_t r, int32_t k, int32_t window);
static void streamOpDone(Sim *s, int32_t g);
static void post(Sim *s, int32_t e);
static void complete(Sim *s, int32_t send);

/* The ready queue full: twice its room (0: out of memory). Apart, so that queue() inlines. */
__attribute__((noinline)) static int growReady(Sim *s) {
  int64_t n = s->readyCap;
  int64_t cap = n == 0 ? 64 : 2 * n;
  int32_t *ready = malloc(cap * sizeof(int32_t));
  if (ready == NULL) {
    s->oom = 1;
    return 0;
  }
  for (int64_t k = 0, i = s->readyHead; i < s->readyTail; i++, k++) ready[k] = s->ready[i & (n - 1)];
  free(s->ready);
  s->readyTail -= s->readyHead;
  s->readyHead = 0;
  s->ready = ready;
  s->readyCap = cap;
  return 1;
}

/* The ready queue's entry x (payload · 8 + (hops − 1) · 4 + code), queued at its end. */
static void queue(Sim *s, int32_t x) {
  if (s->readyTail - s->readyHead == s->readyCap && !growReady(s)) return;
  s->ready[s->readyTail++ & (s->readyCap - 1)] = x;
}

/* Continuation `code` of `payload` (a rank; an operation for C_SOP) after `hops` (1 or 2) turns. */
static void later(Sim *s, int32_t payload, int32_t hops, int32_t code) { queue(s, payload * 8 + (hops - 1) * 4 + code); }

static void pushRestart(Sim *s, int32_t r) {
  int64_t at = s->restartHead + s->restartCount++;
  if (at >= s->p) at -= s->p;
  s->restart[at] = r;
}

static void endRun(Sim *s, int32_t r) {
  if (s->ro[Q * r + Q_RUNS] > 0) pushRestart(s, r);
  else s->finished++;
}

static void startRun(Sim *s, int32_t r) {
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  ro[at + Q_RUNS]--;
  ro[at + Q_STEP] = s->stepBase[r] - 1;
  ro[at + Q_LO] = ro[at + Q_HI] = ro[at + Q_NEXT] = 0;
  ro[at + Q_FLAGS] &= ~ISSUING;
  nextStep(s, r);
}

static void localDone(Sim *s, int32_t r, int32_t g) {
  int64_t at = (int64_t)Q * r;
  int32_t flags = s->ro[at + Q_FLAGS];
  if ((flags & WINDOWED) != 0) {
    s->ro[at + Q_RUNNING]++;
    if ((flags & STREAMED) == 0) later(s, r, 1, C_OP);
    else later(s, g, 1, C_SOP);
  } else {
    s->ro[at + Q_UNFINISHED]--;
  }
}

static void chargeCopy(Sim *s, int32_t r, double nbytes) {
  int64_t c = (int64_t)(Q / 2) * r + R_CLOCK;
  double start = s->rf[c];
  if (start < s->now) start = s->now;
  double end = start + copyCost(s, r, nbytes / s->unit);
  s->rf[c] = end;
  if (s->tracing) {
    double x[4] = {r, nbytes, start, end};
    record(s, &s->tc, &s->tcLen, &s->tcCap, 4, x);
  }
}

static void issue(Sim *s, int32_t r, int32_t g) {
  int32_t *io = s->io;
  int64_t at = (int64_t)I * g;
  int32_t k = io[at + E_KIND];
  if (k == K_COMBINE) {
    /* only without data (replay.ts runs combines with data itself) */
    io[at + S_CUR] = 0;
    localDone(s, r, g);
    return;
  }
  if (k == K_COPY) {
    io[at + S_CUR] = 0;
    int32_t end = s->pieceLo[g + 1];
    for (int32_t x = s->pieceLo[g]; x < end; x++) {
      int32_t m = s->pieceLen[x];
      if (s->data) {
        uint8_t *mem = s->mem;
        int32_t src = s->pieceSrc[x], dst = s->pieceDst[x];
        if (s->pieceShort[x] == 1)
          for (int32_t b = 0; b < m; b++) mem[dst + b] = mem[src + b];
        else
          memmove(mem + dst, mem + src, (size_t)m);
      }
      chargeCopy(s, r, m);
    }
    localDone(s, r, g);
    return;
  }
  s->ro[(int64_t)Q * r + Q_RUNNING]++;
  if (k == K_PORT) {
    io[at + S_CUR] = 2;
    post(s, g);
    post(s, s->n + g);
  } else {
    io[at + S_CUR] = 1;
    post(s, g);
  }
}

static void launch(Sim *s, int32_t r) {
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  int32_t hi = ro[at + Q_HI];
  while (!s->oom && ro[at + Q_NEXT] < hi && ro[at + Q_RUNNING] < ro[at + Q_WSIZE]) issue(s, r, ro[at + Q_NEXT]++);
}

static void nextStep(Sim *s, int32_t r) {
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  const int32_t *st = s->st;
  int32_t end = s->stepBase[r + 1];
  int32_t k = ro[at + Q_STEP] + 1;
  while (k < end && st[4 * (int64_t)k + 4 + ST_LO] == st[4 * (int64_t)k + ST_LO]) k++;
  ro[at + Q_STEP] = k;
  if (k == end) {
    endRun(s, r);
    return;
  }
  int32_t first = st[4 * (int64_t)k + ST_LO];
  int32_t hi = st[4 * (int64_t)k + 4 + ST_LO];
  ro[at + Q_LO] = first;
  ro[at + Q_NEXT] = first;
  ro[at + Q_HI] = hi;
  int32_t n = hi - first;
  int32_t w = st[4 * (int64_t)k + ST_WINDOW];
  if (w < n) {
    /* (a step with streams has a negative window) */
    if (w < 0) {
      startStreams(s, r, k, -w);
      return;
    }
    ro[at + Q_FLAGS] = (ro[at + Q_FLAGS] & ~STREAMED) | WINDOWED;
    ro[at + Q_WSIZE] = w;
    ro[at + Q_RUNNING] = 0;
    ro[at + Q_DONE] = 0;
    launch(s, r);
    return;
  }
  ro[at + Q_FLAGS] &= ~(WINDOWED | STREAMED);
  ro[at + Q_WSIZE] = n;
  ro[at + Q_UNFINISHED] = n;
  ro[at + Q_FLAGS] |= ISSUING;
  while (!s->oom && ro[at + Q_NEXT] < hi) issue(s, r, ro[at + Q_NEXT]++);
  ro[at + Q_FLAGS] &= ~ISSUING;
  if (ro[at + Q_UNFINISHED] == 0) later(s, r, st[4 * (int64_t)k + ST_REQS] == 1 ? 2 : 1, C_STEP);
}

static void opDone(Sim *s, int32_t g) {
  int32_t *io = s->io;
  if (--io[(int64_t)I * g + S_CUR] > 0) return;
  int32_t r = io[(int64_t)I * g + E_RANK];
  int64_t at = (int64_t)Q * r;
  int32_t flags = s->ro[at + Q_FLAGS];
  if ((flags & WINDOWED) != 0) {
    if ((flags & STREAMED) == 0) later(s, r, 2, C_OP);
    else later(s, g, 2, C_SOP);
  } else if (--s->ro[at + Q_UNFINISHED] == 0 && (flags & ISSUING) == 0) later(s, r, 2, C_STEP);
}

/* Continuation `code` of `payload` (a rank; an operation for C_SOP). */
static void hop(Sim *s, int32_t payload, int32_t code) {
  if (code == C_OP) {
    int32_t *ro = s->ro;
    int64_t at = (int64_t)Q * payload;
    ro[at + Q_RUNNING]--;
    if (++ro[at + Q_DONE] == ro[at + Q_HI] - ro[at + Q_LO]) later(s, payload, 1, C_STEP);
    else launch(s, payload);
    return;
  }
  if (code == C_SOP) streamOpDone(s, payload);
  else nextStep(s, payload);
}

static void runReady(Sim *s) {
  while (!s->oom && s->readyHead < s->readyTail) {
    int32_t x = s->ready[s->readyHead++ & (s->readyCap - 1)];
    /* one hop left: run it; two: queue it again with one */
    if ((x & 4) != 0) queue(s, x - 4);
    else hop(s, x >> 3, x & 3);
  }
  s->readyHead = s->readyTail = 0;
}

/* --- steps with concurrent streams (replay.ts startStreams, launchStream, streamOpDone) ----- */

/* Rank r issues from stream x while it has fewer than `window` outstanding and its next one's dependency (if any) is done. */
static void launchStream(Sim *s, int32_t r, int32_t x) {
  int32_t *sm = s->sm, *io = s->io;
  int64_t a = (int64_t)SM * x;
  int32_t end = sm[a + SM_END];
  int32_t w = s->ro[(int64_t)Q * r + Q_WSIZE];
  while (!s->oom && sm[a + SM_NEXT] < end && sm[a + SM_RUNNING] < w) {
    int32_t g = sm[a + SM_NEXT];
    int32_t d = io[(int64_t)I * g + E_AFTER];
    if (d >= 0 && io[(int64_t)I * d + S_CUR] != DONE) return;
    sm[a + SM_NEXT] = g + 1;
    sm[a + SM_RUNNING]++;
    issue(s, r, g);
  }
}

/*
 * Starts rank r's step k, which has streams (replay.ts startStreams). Not inlined, nor is
 * streamOpDone: the loop of schedules without streams stays as small as without them.
 */
__attribute__((noinline)) static void startStreams(Sim *s, int32_t r, int32_t k, int32_t window) {
  int32_t *ro = s->ro, *io = s->io, *sm = s->sm;
  const int32_t *st = s->st;
  int64_t at = (int64_t)Q * r;
  ro[at + Q_FLAGS] |= WINDOWED | STREAMED;
  ro[at + Q_WSIZE] = window;
  ro[at + Q_DONE] = 0;
  ro[at + Q_NEXT] = ro[at + Q_HI];
  for (int32_t g = ro[at + Q_LO]; g < ro[at + Q_HI]; g++) io[(int64_t)I * g + S_CUR] = 0;
  int32_t x0 = st[4 * (int64_t)k + ST_STREAM], x1 = st[4 * (int64_t)k + 4 + ST_STREAM];
  for (int32_t x = x0; x < x1; x++) {
    sm[(int64_t)SM * x + SM_NEXT] = sm[(int64_t)SM * x + SM_START];
    sm[(int64_t)SM * x + SM_RUNNING] = 0;
  }
  for (int32_t x = x0; x < x1; x++) launchStream(s, r, x);
}

/* The continuation of stream operation g (replay.ts streamOpDone). */
__attribute__((noinline)) static void streamOpDone(Sim *s, int32_t g) {
  int32_t *io = s->io, *ro = s->ro;
  int32_t r = io[(int64_t)I * g + E_RANK];
  int64_t at = (int64_t)Q * r;
  io[(int64_t)I * g + S_CUR] = DONE;
  int32_t x = io[(int64_t)I * g + E_STREAM];
  s->sm[(int64_t)SM * x + SM_RUNNING]--;
  if (++ro[at + Q_DONE] == ro[at + Q_HI] - ro[at + Q_LO]) {
    later(s, r, 1, C_STEP);
    return;
  }
  launchStream(s, r, x);
  int32_t k = ro[at + Q_STEP];
  int32_t x1 = s->st[4 * (int64_t)k + 4 + ST_STREAM];
  for (int32_t y = s->st[4 * (int64_t)k + ST_STREAM]; y < x1; y++)
    if (y != x) launchStream(s, r, y);
}

/* --- the engine (replay.ts "the engine") ------------------------------------------------ */

static int32_t ownerOf(Sim *s, int32_t e) { return e >= s->n ? e - s->n : e; }

static void settleClock(Sim *s, int32_t r) {
  int64_t c = (int64_t)(Q / 2) * r + R_CLOCK;
  if (s->rf[c] < s->now) s->rf[c] = s->now;
}

static void markDirty(Sim *s, int32_t r) {
  int32_t flags = s->ro[(int64_t)Q * r + Q_FLAGS];
  if ((flags & DIRTY) == 0) {
    s->ro[(int64_t)Q * r + Q_FLAGS] = flags | DIRTY;
    s->dirty[s->nDirty++] = r;
  }
}

static int canSend(Sim *s, int32_t r) {
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  return s->duplex ? ro[at + Q_BUSY_S] == 0 : ro[at + Q_BUSY_S] + ro[at + Q_BUSY_R] < s->k;
}

static int canRecv(Sim *s, int32_t r) {
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  return s->duplex ? ro[at + Q_BUSY_R] == 0 : ro[at + Q_BUSY_S] + ro[at + Q_BUSY_R] < s->k;
}

static int portsFree(Sim *s, int32_t from, int32_t to) {
  if (from != to) return canSend(s, from) && canRecv(s, to);
  int32_t *ro = s->ro;
  int64_t at = (int64_t)Q * from;
  return s->duplex ? ro[at + Q_BUSY_S] == 0 && ro[at + Q_BUSY_R] == 0 : ro[at + Q_BUSY_S] + ro[at + Q_BUSY_R] < s->k;
}

static void appendPend(Sim *s, int32_t r, int32_t x) {
  int32_t *io = s->io, *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  int32_t tail = ro[at + Q_PTAIL];
  io[(int64_t)I * x + E_QNEXT] = -1;
  io[(int64_t)I * x + E_QPREV] = tail;
  if (tail == -1) ro[at + Q_PHEAD] = x;
  else io[(int64_t)I * tail + E_QNEXT] = x;
  ro[at + Q_PTAIL] = x;
}

static void unlinkPend(Sim *s, int32_t r, int32_t x) {
  int32_t *io = s->io, *ro = s->ro;
  int64_t at = (int64_t)Q * r;
  int32_t prev = io[(int64_t)I * x + E_QPREV];
  int32_t next = io[(int64_t)I * x + E_QNEXT];
  if (prev == -1) ro[at + Q_PHEAD] = next;
  else io[(int64_t)I * prev + E_QNEXT] = next;
  if (next == -1) ro[at + Q_PTAIL] = prev;
  else io[(int64_t)I * next + E_QPREV] = prev;
}

static void compactWaiting(Sim *s) {
  int64_t j = 0;
  for (int64_t i = 0; i < s->wLen; i++) {
    int32_t x = s->wOps[i];
    if (x == -1) continue;
    if (j != i) {
      s->wOps[j] = x;
      s->wFrom[j] = s->wFrom[i];
      s->wTo[j] = s->wTo[i];
      s->io[(int64_t)I * x + E_STATE] = (int32_t)j;
    }
    j++;
  }
  s->wLen = j;
}

static void growWaiting(Sim *s) {
  if (s->nWaiting * 2 <= s->wLen && s->wLen > 0) {
    compactWaiting(s);
    return;
  }
  int64_t cap = s->wCap == 0 ? 64 : 2 * s->wCap;
  int32_t *a = grow(s, s->wOps, cap * sizeof(int32_t));
  if (a != NULL) s->wOps = a;
  int32_t *b = grow(s, s->wFrom, cap * sizeof(int32_t));
  if (b != NULL) s->wFrom = b;
  int32_t *c = grow(s, s->wTo, cap * sizeof(int32_t));
  if (c != NULL) s->wTo = c;
  if (!s->oom) s->wCap = cap;
}

static void startTransfer(Sim *s, int32_t tr) {
  int32_t *io = s->io;
  int64_t at = (int64_t)I * tr;
  int32_t from = io[at + E_RANK], to = io[at + E_PEER];
  io[at + E_STATE] = STARTED;
  s->fo[(int64_t)(I / 2) * tr + F_START] = s->now;
  double units = io[at + E_LEN] / s->unit;
  double dur;
  if (from != to) {
    s->ro[(int64_t)Q * from + Q_BUSY_S]++;
    s->ro[(int64_t)Q * to + Q_BUSY_R]++;
    dur = comm(s, from, to, units);
  } else {
    s->ro[(int64_t)Q * from + Q_BUSY_S]++;
    if (s->duplex) s->ro[(int64_t)Q * from + Q_BUSY_R]++;
    dur = copyCost(s, from, units);
  }
  evPush(s, s->now + dur, s->evSeq++, tr);
}

static void waitPorts(Sim *s, int32_t send) {
  int32_t r = s->io[(int64_t)I * send + E_RANK];
  appendPend(s, r, send);
  markDirty(s, r);
  if (s->wLen == s->wCap) growWaiting(s);
  if (s->oom) return;
  int64_t i = s->wLen++;
  s->wOps[i] = send;
  s->wFrom[i] = r;
  s->wTo[i] = s->io[(int64_t)I * send + E_PEER];
  s->io[(int64_t)I * send + E_STATE] = (int32_t)i;
  s->nWaiting++;
}

static void unwaitAndStart(Sim *s, int32_t x) {
  int32_t *io = s->io;
  int64_t at = (int64_t)I * x;
  int32_t from = io[at + E_RANK], to = io[at + E_PEER];
  unlinkPend(s, from, x);
  if (to != from) unlinkPend(s, to, io[at + E_PARTNER]);
  s->wOps[io[at + E_STATE]] = -1;
  io[at + E_STATE] = -1;
  s->nWaiting--;
  startTransfer(s, x);
}

static void pair(Sim *s, int32_t send, int32_t recv) {
  int32_t *io = s->io;
  int32_t n = io[(int64_t)I * send + E_LEN];
  int32_t from = io[(int64_t)I * send + E_RANK];
  int32_t to = io[(int64_t)I * recv + E_RANK];
  s->fo[(int64_t)(I / 2) * send + F_SEQ] = s->matchSeq++;
  if (from != to) {
    if (n == 0) {
      s->fo[(int64_t)(I / 2) * send + F_START] = s->now;
      complete(s, send);
    } else if (s->ro[(int64_t)Q * from + Q_PHEAD] == -1 && s->ro[(int64_t)Q * to + Q_PHEAD] == -1 && canSend(s, from) && canRecv(s, to)) {
      startTransfer(s, send);
    } else {
      waitPorts(s, send);
      appendPend(s, to, recv);
      markDirty(s, to);
    }
    return;
  }
  if (n == 0 || !(copyCost(s, from, n / s->unit) > 0)) {
    s->fo[(int64_t)(I / 2) * send + F_START] = s->now;
    complete(s, send);
    return;
  }
  waitPorts(s, send);
}

/* Operation e becomes visible: it pairs with its (static) partner if that is visible already. */
static void match(Sim *s, int32_t e) {
  int32_t *io = s->io;
  int32_t q = io[(int64_t)I * e + E_PARTNER];
  if (io[(int64_t)I * q + E_STATE] != POSTED) {
    io[(int64_t)I * e + E_STATE] = POSTED;
    return;
  }
  io[(int64_t)I * q + E_STATE] = IDLE;
  int32_t k = io[(int64_t)I * e + E_KIND];
  if (k == K_SEND || k == K_PORT_SEND) pair(s, e, q);
  else pair(s, q, e);
}

static void post(Sim *s, int32_t e) {
  s->live++;
  int32_t *io = s->io;
  io[(int64_t)I * e + E_STATE] = IDLE;
  int32_t r = io[(int64_t)I * e + E_RANK];
  int64_t c = (int64_t)(Q / 2) * r + R_CLOCK;
  double t = s->rf[c];
  if (t <= s->now) {
    s->rf[c] = s->now;
    match(s, e);
  } else {
    evPush(s, t, s->evSeq++, e);
  }
}

static void complete(Sim *s, int32_t send) {
  int32_t *io = s->io;
  int32_t recv = io[(int64_t)I * send + E_PARTNER];
  int32_t n = io[(int64_t)I * send + E_LEN];
  if (s->data && n > 0) {
    /* replay.ts's rule (both offsets are set: the native loop runs no vectored message) */
    int32_t src = io[(int64_t)I * send + E_OFF], dst = io[(int64_t)I * recv + E_OFF];
    uint8_t *mem = s->mem;
    if (n <= LOOP_COPY || (n <= 16 && dst + n > src && src + n > dst))
      for (int32_t i = 0; i < n; i++) mem[dst + i] = mem[src + i];
    else
      memmove(mem + dst, mem + src, (size_t)n);
  }
  int32_t from = io[(int64_t)I * send + E_RANK], to = io[(int64_t)I * recv + E_RANK];
  settleClock(s, from);
  settleClock(s, to);
  s->messages++;
  s->bytes += n;
  if (s->tracing) {
    double x[6] = {from, to, ownerOf(s, send), n, s->fo[(int64_t)(I / 2) * send + F_START], s->now};
    record(s, &s->tm, &s->tmLen, &s->tmCap, 6, x);
  }
  io[(int64_t)I * send + E_STATE] = IDLE;
  s->live -= 2;
  opDone(s, ownerOf(s, send));
  opDone(s, ownerOf(s, recv));
}

static void endTransfer(Sim *s, int32_t tr) {
  int32_t *io = s->io;
  int32_t from = io[(int64_t)I * tr + E_RANK], to = io[(int64_t)I * tr + E_PEER];
  s->ro[(int64_t)Q * from + Q_BUSY_S]--;
  if (from != to) s->ro[(int64_t)Q * to + Q_BUSY_R]--;
  else if (s->duplex) s->ro[(int64_t)Q * from + Q_BUSY_R]--;
  markDirty(s, from);
  if (from != to) markDirty(s, to);
  complete(s, tr);
}

static int32_t firstStartable(Sim *s, int32_t r) {
  int32_t *ro = s->ro, *io = s->io;
  int64_t at = (int64_t)Q * r;
  if (s->duplex ? ro[at + Q_BUSY_S] > 0 && ro[at + Q_BUSY_R] > 0 : ro[at + Q_BUSY_S] + ro[at + Q_BUSY_R] >= s->k) return -1;
  for (int32_t x = ro[at + Q_PHEAD]; x != -1; x = io[(int64_t)I * x + E_QNEXT]) {
    int32_t k = io[(int64_t)I * x + E_KIND];
    int32_t tr = k == K_SEND || k == K_PORT_SEND ? x : io[(int64_t)I * x + E_PARTNER];
    if (portsFree(s, io[(int64_t)I * tr + E_RANK], io[(int64_t)I * tr + E_PEER])) return tr;
  }
  return -1;
}

static void pushCandidate(Sim *s, int32_t r) {
  int32_t x = firstStartable(s, r);
  if (x != -1) heapPush(s, &s->cand, s->fo[(int64_t)(I / 2) * x + F_SEQ], 0, x);
}

static void scanWaiting(Sim *s) {
  int64_t n = s->wLen;
  for (int64_t i = 0; i < n; i++) {
    if (!portsFree(s, s->wFrom[i], s->wTo[i])) continue;
    int32_t x = s->wOps[i];
    if (x != -1) unwaitAndStart(s, x);
  }
  if (s->nWaiting * 2 <= s->wLen) compactWaiting(s);
}

static void arbitrate(Sim *s) {
  int32_t *ro = s->ro;
  if (s->nWaiting == 0) {
    for (int32_t i = 0; i < s->nDirty; i++) ro[(int64_t)Q * s->dirty[i] + Q_FLAGS] &= ~DIRTY;
    s->nDirty = 0;
    if (s->wLen > 0) compactWaiting(s);
    return;
  }
  if ((int64_t)s->nDirty * 4 >= s->nWaiting || (int64_t)s->nDirty * 8 >= s->p) {
    for (int32_t i = 0; i < s->nDirty; i++) ro[(int64_t)Q * s->dirty[i] + Q_FLAGS] &= ~DIRTY;
    s->nDirty = 0;
    scanWaiting(s);
    return;
  }
  for (int32_t i = 0; i < s->nDirty; i++) {
    int32_t r = s->dirty[i];
    ro[(int64_t)Q * r + Q_FLAGS] &= ~DIRTY;
    pushCandidate(s, r);
  }
  s->nDirty = 0;
  int32_t *io = s->io;
  while (!s->oom && s->cand.size > 0) {
    int32_t x = heapPop(&s->cand);
    if (io[(int64_t)I * x + E_STATE] == STARTED) continue;
    int32_t from = io[(int64_t)I * x + E_RANK], to = io[(int64_t)I * x + E_PEER];
    if (portsFree(s, from, to)) unwaitAndStart(s, x);
    pushCandidate(s, from);
    if (to != from) pushCandidate(s, to);
  }
}

static void loop(Sim *s) {
  int32_t *io = s->io;
  while (!s->oom) {
    if (s->restartCount > 0) {
      while (s->restartCount > 0 && !s->oom) {
        int32_t r = s->restart[s->restartHead];
        s->restartHead = s->restartHead + 1 == s->p ? 0 : s->restartHead + 1;
        s->restartCount--;
        startRun(s, r);
      }
      continue;
    }
    if (s->readyHead < s->readyTail) {
      runReady(s);
      continue;
    }
    double now = s->now;
    if (evSize(s) > 0 && evTopT(s) <= now) {
      do {
        int32_t e = evPop(s);
        if (io[(int64_t)I * e + E_STATE] == STARTED) endTransfer(s, e);
        else match(s, e);
      } while (!s->oom && evSize(s) > 0 && evTopT(s) <= now);
      continue;
    }
    if (s->nDirty > 0) {
      arbitrate(s);
      continue;
    }
    if (evSize(s) > 0) {
      s->now = evTopT(s);
      continue;
    }
    break;
  }
}

/* --- N-API ------------------------------------------------------------------------------ */

#define CHECK(call)                                                  \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error(env, NULL, "vcoll_sim: bad argument");        \
      return NULL;                                                   \
    }                                                                \
  } while (0)

static void *typed(napi_env env, napi_value v, size_t *count) {
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, &length, &data, &buffer, &offset) != napi_ok) return NULL;
  if (count != NULL) *count = length;
  return data;
}

/* A Float64Array holding a copy of `len` doubles of `data`. */
static int made(napi_env env, const double *data, int64_t len, napi_value *out) {
  void *bytes;
  napi_value ab;
  if (napi_create_arraybuffer(env, (size_t)len * sizeof(double), &bytes, &ab) != napi_ok) return 0;
  if (len > 0) memcpy(bytes, data, (size_t)len * sizeof(double));
  return napi_create_typedarray(env, napi_float64_array, (size_t)len, ab, 0, out) == napi_ok;
}

/*
 * replay(io, ro, st, stepBase, sm, pieceLo, pieceDst, pieceSrc, pieceLen, pieceShort, mem,
 *        params, node, alphaM, betaM, gammaV, out): runs the replay from its reset state
 * (every rank starts `runs` runs in rank order) to the end; `out` gets the counters. Returns
 * true (with P_TRACE: [messages, copies], the trace's records as Float64Arrays), or false when
 * memory ran out (nothing is then to be trusted: replay.ts resets).
 */
static napi_value Replay(napi_env env, napi_callback_info info) {
  size_t argc = 17;
  napi_value argv[17];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 17) {
    napi_throw_error(env, NULL, "vcoll_sim: replay takes 17 arguments");
    return NULL;
  }
  Sim s;
  memset(&s, 0, sizeof s);
  size_t nio = 0, nro = 0, nparams = 0, nout = 0;
  s.io = typed(env, argv[0], &nio);
  s.fo = (double *)s.io;
  s.ro = typed(env, argv[1], &nro);
  s.rf = (double *)s.ro;
  s.st = typed(env, argv[2], NULL);
  s.stepBase = typed(env, argv[3], NULL);
  s.sm = typed(env, argv[4], NULL);
  s.pieceLo = typed(env, argv[5], NULL);
  s.pieceDst = typed(env, argv[6], NULL);
  s.pieceSrc = typed(env, argv[7], NULL);
  s.pieceLen = typed(env, argv[8], NULL);
  s.pieceShort = typed(env, argv[9], NULL);
  s.mem = typed(env, argv[10], NULL);
  double *params = typed(env, argv[11], &nparams);
  s.node = typed(env, argv[12], NULL);
  s.ma = typed(env, argv[13], NULL);
  s.mb = typed(env, argv[14], NULL);
  s.mg = typed(env, argv[15], NULL);
  double *out = typed(env, argv[16], &nout);
  /* (a typed array of no elements may have no data: a schedule without operations has no io) */
  if (params == NULL || nparams < P_COUNT || out == NULL || nout < O_COUNT || s.ro == NULL || nro < (size_t)Q * (size_t)params[P_P] ||
      nio < (size_t)I * (size_t)params[P_N]) {
    napi_throw_error(env, NULL, "vcoll_sim: bad arguments");
    return NULL;
  }
  s.p = (int32_t)params[P_P];
  s.n = (int32_t)params[P_N];
  s.k = (int32_t)params[P_K];
  s.duplex = params[P_DUPLEX] != 0;
  s.unit = params[P_UNIT];
  s.data = params[P_DATA] != 0;
  s.model = (int)params[P_MODEL];
  s.alpha = params[P_ALPHA];
  s.beta = params[P_BETA];
  s.gamma = params[P_GAMMA];
  s.ia = params[P_IA];
  s.ib = params[P_IB];
  s.ea = params[P_EA];
  s.eb = params[P_EB];
  int32_t runs = (int32_t)params[P_RUNS];
  s.tracing = params[P_TRACE] != 0;
  heapInit(&s.heap);
  heapInit(&s.cand);
  s.dirty = malloc((size_t)s.p * sizeof(int32_t));
  s.restart = malloc((size_t)s.p * sizeof(int32_t));
  if (s.dirty == NULL || s.restart == NULL) s.oom = 1;
  if (!s.oom) {
    if (runs > 0) {
      for (int32_t r = 0; r < s.p; r++) {
        s.ro[(int64_t)Q * r + Q_RUNS] = runs;
        pushRestart(&s, r);
      }
    } else {
      s.finished = s.p;
    }
    loop(&s);
  }
  out[O_MESSAGES] = s.messages;
  out[O_BYTES] = s.bytes;
  out[O_NOW] = s.now;
  out[O_LIVE] = s.live;
  out[O_FINISHED] = (double)s.finished;
  int ok = !s.oom;
  napi_value result;
  if (ok && s.tracing) {
    /* [messages, copies]: the records as Float64Arrays */
    napi_value arr, m, c;
    if (!made(env, s.tm, s.tmLen, &m) || !made(env, s.tc, s.tcLen, &c) || napi_create_array_with_length(env, 2, &arr) != napi_ok ||
        napi_set_element(env, arr, 0, m) != napi_ok || napi_set_element(env, arr, 1, c) != napi_ok) {
      ok = 0;
    } else {
      result = arr;
    }
  }
  free(s.tm);
  free(s.tc);
  heapFree(&s.heap);
  heapFree(&s.cand);
  free(s.laneS);
  free(s.lane);
  free(s.dirty);
  free(s.wOps);
  free(s.wFrom);
  free(s.wTo);
  free(s.ready);
  free(s.restart);
  if (!ok || !s.tracing) CHECK(napi_get_boolean(env, ok, &result));
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "replay", NAPI_AUTO_LENGTH, Replay, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "replay", fn) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
