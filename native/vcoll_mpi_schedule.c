/*
 * vcoll's MPI binding, part 2: a collective's data phase run in C (src/comm/schedule.ts).
 *
 * A schedule is made once (schedCreate) from its encoding and the buffers it addresses, and run
 * as often as wanted (schedRun): every send's and receive's address, count and datatype (an
 * hindexed one for several ranges) are made at creation, so a run posts MPI_Isend / MPI_Irecv
 * and completes them, nothing else; copies are memcpy of precomputed pieces, combines a
 * built-in operator's loop (vcoll_mpi_combine.c) over precomputed pointers. (Not persistent
 * requests: a run's collective tags move with the call slot it runs in, `shift` below.) Steps run in order; a step's
 * operations are started in order with at most `window` of them outstanding (a copy or a
 * combine holds no slot: it is done when started), and the step ends when all have completed
 * (MPI_Testsome, or MPI_Waitsome when blocking).
 *
 * A step of concurrent streams (ScheduleStep.streams; the rules as schedule/run.ts `streamed`,
 * the portable executor): its operations are `nstreams` streams of consecutive operations, each
 * started in order with at most `window` of its own outstanding, side by side; an operation
 * with a dependency (`after`, an operation of an earlier stream) is not started before that one
 * has completed, and its stream waits there. What a pipeline needs (the pipelined ring of
 * src/collectives/allgather/pipelined-ring.ts: a receive stream and a send stream, each chunk
 * sent once received). The requests outstanding are kept packed at the front of the step's
 * part of `reqs` (in the order started), so a poll tests those only, whatever the step's size.
 *
 * Encoding (Int32Array): nsteps, then per step: window, nops (a step of streams: -window, nops,
 * nstreams, the streams' operation counts (nstreams, summing to nops), then per operation its
 * dependency: its index in the step or -1 (nops)), then per operation
 *   send / recv: kind (0 / 1), comm handle, MPI peer, MPI tag, shiftable (0 / 1), nranges, (buffer, offset, length) * nranges
 *   copy:        2, nfrom, (buffer, offset, length) * nfrom, nto, (buffer, offset, length) * nto
 *   combine:     3, op, type, ninto, (buffer, offset, length) * ninto, nfrom, (buffer, offset, length) * nfrom
 *                (into := into ⊕ from; op and type codes as vcoll_mpi_internal.h VCOLL_COMBINE_*;
 *                 ninto = nfrom ≤ 1, the two ranges of one length, a multiple of the element size)
 * Ranges were validated by the caller (schedule/run.ts) and are checked again here.
 *
 * schedCreate(code, buffers: Uint8Array[], info: Int32Array(8)) -> handle
 * schedRun(handle, spinNs, shift) -> 1: done (a run starting now adds `shift` to the tags of
 *   the operations marked shiftable); 0: still running after spinning spinNs ns (call again);
 *   -1: failed, info = step, op (index in the schedule), peer, tag, error class (or 0), bytes
 *   received (a receive of another length than its ranges: error class 0), and whether the
 *   schedule is unusable now (1: the failed run left requests outstanding; 0: it may be
 *   started again); while running,
 *   info[0..1] = the step and its first op (a step of streams: the first of its operations
 *   outstanding, the one the run waits for). spinNs < 0 blocks until done (under the watchdog).
 * schedRunOnce(code, buffers, info, spinNs, tagShift) -> made, run and freed in one call (a
 *   one-shot collective): 1 / -1 as schedRun; 0: still running, kept, info[7] = its handle.
 * schedFree(handle)
 */

#define _GNU_SOURCE
#include <limits.h>
#include <mpi.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vcoll_mpi_internal.h"


typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t len;
} piece;

typedef struct {
  int kind; /* 0 send, 1 recv, 2 copy, 3 combine */
  int peer, tag, shiftable;
  MPI_Comm comm;
  void *base;
  int count;
  int expect;      /* bytes a receive must get */
  MPI_Datatype type; /* a derived datatype to free, or MPI_DATATYPE_NULL */
  int npieces;
  piece *pieces; /* copy */
  vcoll_combine_fn combine; /* combine: the operator, on n elements of into and from */
  unsigned char *into;
  const unsigned char *from;
  size_t n;
} sched_op;

typedef struct {
  int nsteps, nops;
  int *first, *count, *window; /* per step */
  int *sfirst, *nstr; /* per step: its first stream (index in the stream arrays) and how many; sfirst -1: a step without streams */
  sched_op *ops;
  MPI_Request *reqs; /* per op: the run's request (MPI_REQUEST_NULL when none); a step of streams: packed, see sched_streams */
  int *idx;
  MPI_Status *sts;
  napi_ref *refs;
  int nrefs;
  int *info;
  napi_ref info_ref;
  /* steps of streams (NULL when the schedule has none) */
  int *sbeg, *send_;   /* per stream: its operations [sbeg, send_) (indices in ops) */
  int *snext, *srun;   /* per stream, run state: its next operation to start, its requests outstanding */
  int *after;          /* per op: the operation (index in ops) it is started after, or -1 */
  int *ostream;        /* per op: its stream */
  int *aop;            /* per request slot reqs[first + i] of a step of streams: its operation */
  unsigned char *done; /* per op, run state: completed */
  /* run state */
  int running, failed, step, issued, outstanding, shift;
  int sstarted; /* the current step of streams has its run state set */
} sched_t;

static sched_t **scheds = NULL;
static int nscheds = 0, capscheds = 0;

static void sched_destroy(napi_env env, sched_t *s) {
  if (s == NULL) return;
  /* a schedule collected after MPI_Finalize (the JS side frees it when it is garbage): only memory */
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (int i = 0; i < s->nops; i++) {
    if (!finalized && s->reqs != NULL && s->reqs[i] != MPI_REQUEST_NULL) MPI_Request_free(&s->reqs[i]);
    if (s->ops != NULL) {
      if (!finalized && s->ops[i].type != MPI_DATATYPE_NULL) MPI_Type_free(&s->ops[i].type);
      free(s->ops[i].pieces);
    }
  }
  for (int i = 0; i < s->nrefs; i++) if (s->refs[i] != NULL) napi_delete_reference(env, s->refs[i]);
  if (s->info_ref != NULL) napi_delete_reference(env, s->info_ref);
  free(s->first);
  free(s->count);
  free(s->window);
  free(s->sfirst);
  free(s->nstr);
  free(s->sbeg);
  free(s->send_);
  free(s->snext);
  free(s->srun);
  free(s->after);
  free(s->ostream);
  free(s->aop);
  free(s->done);
  free(s->ops);
  free(s->reqs);
  free(s->idx);
  free(s->sts);
  free(s->refs);
  free(s);
}

typedef struct {
  unsigned char **base;
  size_t *len;
  int n;
} sched_bufs;

/* Reads `n` ranges at code[*at]; fills ptrs/lens (allocated) and returns the total, or -1 (nothing allocated). */
static long read_ranges(const int *code, size_t ncode, size_t *at, const sched_bufs *b, int *n, unsigned char ***ptrs, int **lens) {
  if (*at >= ncode) return -1;
  int k = code[(*at)++];
  if (k < 0 || *at + 3 * (size_t)k > ncode) return -1;
  *n = k;
  *ptrs = malloc(sizeof(unsigned char *) * (size_t)(k > 0 ? k : 1));
  *lens = malloc(sizeof(int) * (size_t)(k > 0 ? k : 1));
  long total = 0;
  for (int i = 0; i < k; i++) {
    int buf = code[*at], off = code[*at + 1], len = code[*at + 2];
    *at += 3;
    if (buf < 0 || buf >= b->n || off < 0 || len < 0 || (size_t)off + (size_t)len > b->len[buf] || total + len > INT_MAX) {
      free(*ptrs);
      free(*lens);
      return -1;
    }
    (*ptrs)[i] = b->base[buf] + off;
    (*lens)[i] = len;
    total += len;
  }
  return total;
}

/* Keeps the buffers (argv[1]'s elements) and info (argv[2]) of `s` alive: references. */
static void sched_keep(napi_env env, sched_t *s, napi_value *argv) {
  for (int i = 0; i < s->nrefs; i++) {
    napi_value v;
    napi_get_element(env, argv[1], (uint32_t)i, &v);
    napi_create_reference(env, v, 1, &s->refs[i]);
  }
  napi_create_reference(env, argv[2], 1, &s->info_ref);
}

/* Registers `s` in the handle table: its handle, or -1 (out of memory). */
static int sched_register(sched_t *s) {
  int hnd = -1;
  for (int i = 0; i < nscheds; i++) if (scheds[i] == NULL) { hnd = i; break; }
  if (hnd < 0) {
    if (!grow((void **)&scheds, &capscheds, nscheds + 1, sizeof(sched_t *))) return -1;
    hnd = nscheds++;
  }
  scheds[hnd] = s;
  return hnd;
}

/*
 * Builds a schedule from argv = (code, buffers, info); NULL with a JS exception pending when
 * the arguments do not fit. Holds no reference to the buffers (sched_keep does).
 */
static sched_t *sched_make(napi_env env, napi_value *argv) {
  int *code;
  size_t ncode;
  if (!get_int32_array(env, argv[0], &code, &ncode, 0)) return NULL;
  int *infop;
  size_t ninfo;
  if (!get_int32_array(env, argv[2], &infop, &ninfo, 0)) return NULL;
  if (ninfo < 8) {
    throw_range(env, "vcoll_mpi: schedCreate: info must hold 8 Int32");
    return NULL;
  }
  bool isarr = false;
  napi_is_array(env, argv[1], &isarr);
  if (!isarr) {
    throw_type(env, "vcoll_mpi: schedCreate: buffers must be an array of Uint8Array");
    return NULL;
  }
  uint32_t nb;
  napi_get_array_length(env, argv[1], &nb);
  sched_t *s = calloc(1, sizeof(sched_t));
  sched_bufs b = {malloc(sizeof(unsigned char *) * (nb + 1)), malloc(sizeof(size_t) * (nb + 1)), (int)nb};
  s->refs = calloc(nb + 1, sizeof(napi_ref));
  s->nrefs = (int)nb;
  const char *bad = NULL;
  for (uint32_t i = 0; i < nb && bad == NULL; i++) {
    napi_value v;
    napi_get_element(env, argv[1], i, &v);
    void *p;
    size_t len;
    if (!get_bytes(env, v, &p, &len, 0)) {
      bad = "";
      break;
    }
    b.base[i] = p;
    b.len[i] = len;
  }
  s->info = infop;
  size_t at = 0;
  if (bad == NULL && ncode < 1) bad = "vcoll_mpi: schedCreate: empty code";
  int nsteps = bad == NULL ? code[at++] : 0;
  if (bad == NULL && (nsteps < 0 || (size_t)nsteps > ncode)) bad = "vcoll_mpi: schedCreate: bad step count";
  /* first pass: count operations and streams */
  int nops = 0, nstreams = 0, streamed = 0;
  if (bad == NULL) {
    size_t a = at;
    for (int st = 0; st < nsteps && bad == NULL; st++) {
      if (a + 2 > ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
      int w = code[a], n = code[a + 1];
      a += 2;
      if (n < 0) { bad = "vcoll_mpi: schedCreate: bad op count"; break; }
      if (w < 0) {
        /* streams: nstreams, their counts, one dependency per operation (checked in the second pass) */
        if (w == INT_MIN) { bad = "vcoll_mpi: schedCreate: bad window"; break; }
        if (a >= ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
        int m = code[a++];
        if (m < 0 || a + (size_t)m + (size_t)n > ncode) { bad = "vcoll_mpi: schedCreate: bad stream count"; break; }
        long sum = 0;
        for (int k = 0; k < m && sum <= n; k++) {
          if (code[a + k] < 0) { sum = -1; break; }
          sum += code[a + k];
        }
        if (sum != n) { bad = "vcoll_mpi: schedCreate: stream counts do not sum to the step's operations"; break; }
        a += (size_t)m + (size_t)n;
        nstreams += m;
        streamed = 1;
      }
      for (int j = 0; j < n && bad == NULL; j++) {
        if (a >= ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
        int kind = code[a];
        if (kind == 2) {
          a++;
          for (int side = 0; side < 2; side++) {
            if (a >= ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
            int k = code[a];
            if (k < 0) { bad = "vcoll_mpi: schedCreate: bad range count"; break; }
            a += 1 + 3 * (size_t)k;
          }
        } else if (kind == 3) {
          a += 3;
          for (int side = 0; side < 2; side++) {
            if (a >= ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
            int k = code[a];
            if (k < 0) { bad = "vcoll_mpi: schedCreate: bad range count"; break; }
            a += 1 + 3 * (size_t)k;
          }
        } else if (kind == 0 || kind == 1) {
          if (a + 6 > ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
          int k = code[a + 5];
          if (k < 0) { bad = "vcoll_mpi: schedCreate: bad range count"; break; }
          a += 6 + 3 * (size_t)k;
        } else {
          bad = "vcoll_mpi: schedCreate: bad operation kind";
        }
        nops++;
      }
    }
    if (bad == NULL && a != ncode) bad = "vcoll_mpi: schedCreate: trailing code";
  }
  if (bad == NULL) {
    s->nsteps = nsteps;
    s->nops = nops;
    s->first = malloc(sizeof(int) * (size_t)(nsteps + 1));
    s->count = malloc(sizeof(int) * (size_t)(nsteps + 1));
    s->window = malloc(sizeof(int) * (size_t)(nsteps + 1));
    s->sfirst = malloc(sizeof(int) * (size_t)(nsteps + 1));
    s->nstr = malloc(sizeof(int) * (size_t)(nsteps + 1));
    if (streamed) {
      s->sbeg = malloc(sizeof(int) * (size_t)(nstreams + 1));
      s->send_ = malloc(sizeof(int) * (size_t)(nstreams + 1));
      s->snext = malloc(sizeof(int) * (size_t)(nstreams + 1));
      s->srun = malloc(sizeof(int) * (size_t)(nstreams + 1));
      s->after = malloc(sizeof(int) * (size_t)(nops + 1));
      s->ostream = malloc(sizeof(int) * (size_t)(nops + 1));
      s->aop = malloc(sizeof(int) * (size_t)(nops + 1));
      s->done = calloc((size_t)(nops + 1), 1);
    }
    s->ops = calloc((size_t)(nops + 1), sizeof(sched_op));
    s->reqs = malloc(sizeof(MPI_Request) * (size_t)(nops + 1));
    s->idx = malloc(sizeof(int) * (size_t)(nops + 1));
    s->sts = malloc(sizeof(MPI_Status) * (size_t)(nops + 1));
    for (int i = 0; i <= nops; i++) {
      s->reqs[i] = MPI_REQUEST_NULL;
      s->ops[i].type = MPI_DATATYPE_NULL;
    }
  }
  int o = 0, ks = 0;
  static unsigned char zero_byte[1];
  for (int st = 0; st < nsteps && bad == NULL; st++) {
    int w = code[at];
    s->window[st] = w < 0 ? -w : w < 1 ? 1 : w;
    s->count[st] = code[at + 1];
    s->first[st] = o;
    s->sfirst[st] = -1;
    s->nstr[st] = 0;
    at += 2;
    if (w < 0) {
      /* the streams' operations, consecutive; each dependency an operation of an earlier stream */
      int m = code[at++], n = s->count[st];
      s->sfirst[st] = ks;
      s->nstr[st] = m;
      for (int k = 0, beg = o; k < m; k++) {
        s->sbeg[ks + k] = beg;
        beg += code[at + k];
        s->send_[ks + k] = beg;
        for (int i = s->sbeg[ks + k]; i < beg; i++) s->ostream[i] = ks + k;
      }
      at += (size_t)m;
      for (int j = 0; j < n; j++) {
        int d = code[at + j];
        if (d == -1) {
          s->after[o + j] = -1;
        } else if (d < 0 || d >= n || o + d >= s->sbeg[s->ostream[o + j]]) {
          bad = "vcoll_mpi: schedCreate: a dependency is not an operation of an earlier stream";
          break;
        } else {
          s->after[o + j] = o + d;
        }
      }
      at += (size_t)n;
      ks += m;
    }
    for (int j = 0; j < s->count[st] && bad == NULL; j++, o++) {
      sched_op *op = &s->ops[o];
      int kind = code[at];
      op->kind = kind;
      if (kind == 2) {
        at++;
        unsigned char **fp, **tp;
        int *fl, *tl, nf, nt;
        long bf = read_ranges(code, ncode, &at, &b, &nf, &fp, &fl);
        long bt = bf < 0 ? -1 : read_ranges(code, ncode, &at, &b, &nt, &tp, &tl);
        if (bf < 0 || bt < 0 || bf != bt) {
          bad = "vcoll_mpi: schedCreate: a copy's ranges do not fit the buffers";
        } else {
          /* pieces: walk both range lists together */
          op->pieces = malloc(sizeof(piece) * (size_t)(nf + nt + 1));
          int i = 0, k = 0, np = 0;
          int fo = 0, to = 0;
          while (i < nf && k < nt) {
            int fl_left = fl[i] - fo, tl_left = tl[k] - to;
            if (fl_left == 0) { i++; fo = 0; continue; }
            if (tl_left == 0) { k++; to = 0; continue; }
            int m = fl_left < tl_left ? fl_left : tl_left;
            op->pieces[np].dst = tp[k] + to;
            op->pieces[np].src = fp[i] + fo;
            op->pieces[np].len = (size_t)m;
            np++;
            fo += m;
            to += m;
          }
          op->npieces = np;
        }
        if (bf >= 0) { free(fp); free(fl); }
        if (bf >= 0 && bt >= 0) { free(tp); free(tl); }
        continue;
      }
      if (kind == 3) {
        if (at + 3 > ncode) { bad = "vcoll_mpi: schedCreate: truncated code"; break; }
        size_t eb = 0;
        op->combine = vcoll_combine_resolve(code[at + 1], code[at + 2], &eb);
        at += 3;
        if (op->combine == NULL) { bad = "vcoll_mpi: schedCreate: a combine's operator is not a built-in one on its type"; break; }
        unsigned char **ip, **fp;
        int *il, *fl, ni, nf;
        long bi = read_ranges(code, ncode, &at, &b, &ni, &ip, &il);
        long bf = bi < 0 ? -1 : read_ranges(code, ncode, &at, &b, &nf, &fp, &fl);
        if (bi < 0 || bf < 0 || bi != bf || ni != nf || ni > 1 || (size_t)bi % eb != 0) {
          bad = "vcoll_mpi: schedCreate: a combine's ranges do not fit the buffers (one range each, of one length, whole elements)";
        } else if (ni == 1) {
          op->into = ip[0];
          op->from = fp[0];
          op->n = (size_t)bi / eb;
        }
        if (bi >= 0) { free(ip); free(il); }
        if (bi >= 0 && bf >= 0) { free(fp); free(fl); }
        continue;
      }
      int h = code[at + 1];
      op->peer = code[at + 2];
      op->tag = code[at + 3];
      op->shiftable = code[at + 4];
      at += 5;
      MPI_Comm c;
      if (!vcoll_mpi_comm(h, &c)) {
        bad = "vcoll_mpi: schedCreate: not a live communicator handle";
        break;
      }
      unsigned char **pp;
      int *pl, np;
      long total = read_ranges(code, ncode, &at, &b, &np, &pp, &pl);
      if (total < 0) {
        bad = "vcoll_mpi: schedCreate: ranges do not fit the buffers";
        break;
      }
      void *base;
      int count;
      MPI_Datatype t = MPI_BYTE;
      int rc = MPI_SUCCESS;
      if (np == 0) {
        base = zero_byte;
        count = 0;
      } else if (np == 1) {
        base = pp[0];
        count = pl[0];
      } else {
        MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)np);
        for (int r = 0; r < np; r++) MPI_Get_address(pp[r], &disp[r]);
        rc = MPI_Type_create_hindexed(np, pl, disp, MPI_BYTE, &t);
        free(disp);
        if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
        base = MPI_BOTTOM;
        count = 1;
        if (rc == MPI_SUCCESS) op->type = t;
      }
      free(pp);
      free(pl);
      op->expect = (int)total;
      op->comm = c;
      op->base = base;
      op->count = count;
      if (rc != MPI_SUCCESS) {
        free(b.base);
        free(b.len);
        sched_destroy(env, s);
        throw_mpi(env, "MPI_Type_create_hindexed", rc);
        return NULL;
      }
    }
  }
  free(b.base);
  free(b.len);
  if (bad != NULL) {
    sched_destroy(env, s);
    if (bad[0] != 0) throw_range(env, bad); /* else get_bytes threw */
    return NULL;
  }
  return s;
}

napi_value js_sched_create(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  sched_t *s = sched_make(env, argv);
  if (s == NULL) return NULL;
  sched_keep(env, s, argv);
  int hnd = sched_register(s);
  if (hnd < 0) {
    sched_destroy(env, s);
    return throw_range(env, "vcoll_mpi: schedCreate: out of memory");
  }
  return int_value(env, hnd);
}

/* Records a failure of op `o` (error class cls, 0: wrong length `bytes`). */
static int sched_fail(sched_t *s, int o, int cls, int bytes, int unusable) {
  /* a run that leaves requests outstanding leaves the schedule unusable (they are MPI's) */
  s->failed = unusable || s->outstanding > 0;
  s->running = 0;
  int *f = s->info;
  f[0] = s->step;
  f[1] = o;
  f[2] = s->ops[o].peer;
  f[3] = s->ops[o].tag;
  f[4] = cls;
  f[5] = bytes;
  f[6] = s->failed;
  return -1;
}

/*
 * Completion i of a Testsome / Waitsome that returned `rc`, of operation o: its error, or a
 * receive of another length than its span, fails the run (sched_fail: -1); else 0.
 */
static inline int sched_completed(sched_t *s, int o, int i, int rc) {
  const sched_op *op = &s->ops[o];
  if (rc == MPI_ERR_IN_STATUS && s->sts[i].MPI_ERROR != MPI_SUCCESS) {
    int cls = MPI_ERR_UNKNOWN;
    MPI_Error_class(s->sts[i].MPI_ERROR, &cls);
    return sched_fail(s, o, cls, -1, 0);
  }
  if (op->kind == 1) {
    int got = status_bytes(&s->sts[i], op->type);
    if (got != op->expect) return sched_fail(s, o, 0, got, 0);
  }
  return 0;
}

/* The first (lowest) operation of the current step of streams still outstanding: what its run waits for. */
static int sched_streams_waiting(const sched_t *s, int f) {
  int o = s->aop[f];
  for (int i = 1; i < s->outstanding; i++)
    if (s->aop[f + i] < o) o = s->aop[f + i];
  return o;
}

/*
 * Advances the current step of `s`, a step of streams (the file's doc; schedule/run.ts
 * `streamed` is the reference): 1 completed, 0 pending (after spinning until `until` ns, as
 * sched_advance), -1 failed. Starts every stream in order as far as its window and its
 * dependencies let it, then tests (or, spin < 0, waits for) the requests outstanding, which are
 * kept packed at reqs[f .. f + outstanding) with their operations in aop; completions mark
 * their operations done and free their streams' slots, and the streams go on. Copies and
 * combines are done when started. A dependency is always of an earlier stream, so one pass
 * over the streams in order starts all it can, and a pass that leaves nothing outstanding has
 * started (and so completed) every operation: stream 0 waits for nothing, stream k only for
 * streams before it. Kept out of line: the loop of the steps without streams (sched_advance)
 * stays as small as it was.
 */
__attribute__((noinline)) static int sched_streams(sched_t *s, double spin, double until) {
  int polls = 0;
  int st = s->step, f = s->first[st], w = s->window[st];
  int k0 = s->sfirst[st], k1 = k0 + s->nstr[st];
  if (!s->sstarted) {
    s->sstarted = 1;
    s->outstanding = 0;
    for (int k = k0; k < k1; k++) {
      s->snext[k] = s->sbeg[k];
      s->srun[k] = 0;
    }
    memset(s->done + f, 0, (size_t)s->count[st]);
  }
  for (;;) {
    for (int k = k0; k < k1; k++) {
      while (s->snext[k] < s->send_[k] && s->srun[k] < w) {
        int o = s->snext[k];
        int d = s->after[o];
        if (d >= 0 && !s->done[d]) break;
        sched_op *op = &s->ops[o];
        s->snext[k]++;
        if (op->kind == 2) {
          for (int i = 0; i < op->npieces; i++) memmove(op->pieces[i].dst, op->pieces[i].src, op->pieces[i].len);
          s->done[o] = 1;
          continue;
        }
        if (op->kind == 3) {
          if (op->n > 0) op->combine(op->into, op->from, op->n);
          s->done[o] = 1;
          continue;
        }
        int tag = op->shiftable ? op->tag + s->shift : op->tag;
        MPI_Datatype t = op->type == MPI_DATATYPE_NULL ? MPI_BYTE : op->type;
        MPI_Request *r = &s->reqs[f + s->outstanding];
        int rc = op->kind == 0 ? MPI_Isend(op->base, op->count, t, op->peer, tag, op->comm, r)
                               : MPI_Irecv(op->base, op->count, t, op->peer, tag, op->comm, r);
        if (rc != MPI_SUCCESS) {
          int cls = MPI_ERR_UNKNOWN;
          MPI_Error_class(rc, &cls);
          return sched_fail(s, o, cls, -1, 0);
        }
        s->aop[f + s->outstanding] = o;
        s->outstanding++;
        s->srun[k]++;
      }
    }
    if (s->outstanding == 0) {
      s->sstarted = 0;
      return 1;
    }
    int outcount = 0, rc, active = s->outstanding;
    if (spin < 0) {
      sched_op *wop = &s->ops[sched_streams_waiting(s, f)];
      watch_begin(wop->kind == 0 ? "MPI_Waitsome (schedule send)" : "MPI_Waitsome (schedule receive)", wop->peer,
                  wop->shiftable ? wop->tag + s->shift : wop->tag);
      rc = MPI_Waitsome(active, s->reqs + f, &outcount, s->idx, s->sts);
      watch_end();
    } else {
      rc = MPI_Testsome(active, s->reqs + f, &outcount, s->idx, s->sts);
    }
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      int cls = MPI_ERR_UNKNOWN;
      MPI_Error_class(rc, &cls);
      return sched_fail(s, sched_streams_waiting(s, f), cls, -1, 1);
    }
    if (outcount == MPI_UNDEFINED) outcount = 0;
    s->outstanding -= outcount;
    for (int i = 0; i < outcount; i++) {
      int o = s->aop[f + s->idx[i]];
      if (sched_completed(s, o, i, rc) < 0) return -1;
      s->done[o] = 1;
      s->srun[s->ostream[o]]--;
    }
    if (outcount > 0) {
      /* pack the requests still outstanding (completed ones are MPI_REQUEST_NULL now), in order */
      int j = 0;
      for (int i = 0; i < active; i++) {
        if (s->reqs[f + i] == MPI_REQUEST_NULL) continue;
        s->reqs[f + j] = s->reqs[f + i];
        s->aop[f + j] = s->aop[f + i];
        j++;
      }
      for (int i = j; i < active; i++) s->reqs[f + i] = MPI_REQUEST_NULL;
    } else if (spin >= 0) {
      if (spin == 0 || ((++polls & 15) == 0 && now_ns() > until)) {
        s->info[0] = st;
        s->info[1] = sched_streams_waiting(s, f);
        return 0;
      }
    }
  }
}

/*
 * Advances a running schedule: 1 done, 0 pending, -1 failed. spin < 0: blocks (Waitsome);
 * else polls (Testsome) for up to spin ns.
 */
static int sched_advance(sched_t *s, double spin) {
  double until = spin > 0 ? now_ns() + spin : 0;
  int polls = 0;
  while (s->step < s->nsteps) {
    if (s->sfirst[s->step] >= 0) {
      int r = sched_streams(s, spin, until);
      if (r != 1) return r;
      s->step++;
      continue;
    }
    int f = s->first[s->step], n = s->count[s->step], w = s->window[s->step];
    while (s->issued < n && s->outstanding < w) {
      int o = f + s->issued;
      sched_op *op = &s->ops[o];
      s->issued++;
      if (op->kind == 2) {
        for (int k = 0; k < op->npieces; k++) memmove(op->pieces[k].dst, op->pieces[k].src, op->pieces[k].len);
        continue;
      }
      if (op->kind == 3) {
        if (op->n > 0) op->combine(op->into, op->from, op->n);
        continue;
      }
      int tag = op->shiftable ? op->tag + s->shift : op->tag;
      MPI_Datatype t = op->type == MPI_DATATYPE_NULL ? MPI_BYTE : op->type;
      int rc = op->kind == 0 ? MPI_Isend(op->base, op->count, t, op->peer, tag, op->comm, &s->reqs[o])
                             : MPI_Irecv(op->base, op->count, t, op->peer, tag, op->comm, &s->reqs[o]);
      if (rc != MPI_SUCCESS) {
        int cls = MPI_ERR_UNKNOWN;
        MPI_Error_class(rc, &cls);
        return sched_fail(s, o, cls, -1, 0);
      }
      s->outstanding++;
    }
    if (s->outstanding == 0) {
      s->step++;
      s->issued = 0;
      continue;
    }
    int outcount = 0, rc;
    if (spin < 0) {
      /* the first operation still outstanding names what this rank waits for */
      int o = f;
      for (int i = 0; i < s->issued; i++) {
        if (s->reqs[f + i] != MPI_REQUEST_NULL) { o = f + i; break; }
      }
      watch_begin(s->ops[o].kind == 0 ? "MPI_Waitsome (schedule send)" : "MPI_Waitsome (schedule receive)", s->ops[o].peer,
                  s->ops[o].shiftable ? s->ops[o].tag + s->shift : s->ops[o].tag);
      rc = MPI_Waitsome(s->issued, s->reqs + f, &outcount, s->idx, s->sts);
      watch_end();
    } else {
      rc = MPI_Testsome(s->issued, s->reqs + f, &outcount, s->idx, s->sts);
    }
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      int cls = MPI_ERR_UNKNOWN;
      MPI_Error_class(rc, &cls);
      return sched_fail(s, f, cls, -1, 1);
    }
    if (outcount == MPI_UNDEFINED) outcount = 0;
    s->outstanding -= outcount;
    for (int i = 0; i < outcount; i++) {
      if (sched_completed(s, f + s->idx[i], i, rc) < 0) return -1;
    }
    if (outcount == 0 && spin >= 0) {
      if (spin == 0 || ((++polls & 15) == 0 && now_ns() > until)) {
        s->info[0] = s->step;
        s->info[1] = f;
        return 0;
      }
    }
  }
  s->running = 0;
  return 1;
}

/*
 * schedRun's work (exported: the fast path module vcoll_mpi_fast.cc calls it too): 1 done,
 * 0 running, -1 failed (info written), -2 not a live handle, -3 failed earlier.
 */
/* Starts `s` if it is not running (tags moved by shift), then advances it (sched_advance). */
static int sched_go(sched_t *s, int spin, int shift) {
  if (!s->running) {
    s->running = 1;
    s->shift = shift;
    s->step = 0;
    s->issued = 0;
    s->outstanding = 0;
    s->sstarted = 0;
  }
  return sched_advance(s, spin < 0 ? -1.0 : (double)spin);
}

/*
 * schedRun's work (exported: the fast path module vcoll_mpi_fast.cc calls it too): 1 done,
 * 0 running, -1 failed (info written), -2 not a live handle, -3 failed earlier.
 */
__attribute__((visibility("default"))) int vcoll_mpi_sched_run(int h, int spin, int shift) {
  if (h < 0 || h >= nscheds || scheds[h] == NULL) return -2;
  sched_t *s = scheds[h];
  if (s->failed) return -3;
  return sched_go(s, spin, shift);
}

/*
 * schedRunOnce(code, buffers, info, spinNs, tagShift): a schedule made, run and freed in one
 * call (a one-shot collective): 1 done, -1 failed (info written as for schedRun). When it is
 * still running after spinNs it is kept: 0, info[7] = its handle (schedRun advances it,
 * schedFree frees it).
 */
napi_value js_sched_run_once(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  int spin, shift;
  if (!get_args(env, info, 5, argv) || !get_int(env, argv[3], &spin) || !get_int(env, argv[4], &shift)) return NULL;
  sched_t *s = sched_make(env, argv);
  if (s == NULL) return NULL;
  int r = sched_go(s, spin, shift);
  if (r != 0) {
    sched_destroy(env, s);
    return int_value(env, r);
  }
  sched_keep(env, s, argv);
  int hnd = sched_register(s);
  if (hnd < 0) return throw_range(env, "vcoll_mpi: schedRunOnce: out of memory (a schedule left running)");
  s->info[7] = hnd;
  return int_value(env, 0);
}

napi_value js_sched_run(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int h, spin, shift;
  if (!get_args(env, info, 3, argv) || !get_int(env, argv[0], &h) || !get_int(env, argv[1], &spin) || !get_int(env, argv[2], &shift)) return NULL;
  int r = vcoll_mpi_sched_run(h, spin, shift);
  if (r == -2) return throw_range(env, "vcoll_mpi: not a live schedule handle");
  if (r == -3) return throw_range(env, "vcoll_mpi: the schedule failed earlier");
  return int_value(env, r);
}

napi_value js_sched_free(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int h;
  if (!get_args(env, info, 1, argv) || !get_int(env, argv[0], &h)) return NULL;
  if (h < 0 || h >= nscheds || scheds[h] == NULL) return throw_range(env, "vcoll_mpi: not a live schedule handle");
  sched_t *s = scheds[h];
  /* a run still going (its JS side failed or closed): cancel what is active; sched_destroy frees it */
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (int i = 0; i < s->nops; i++)
      if (s->reqs[i] != MPI_REQUEST_NULL) MPI_Cancel(&s->reqs[i]);
  scheds[h] = NULL;
  sched_destroy(env, s);
  return undefined_value(env);
}


