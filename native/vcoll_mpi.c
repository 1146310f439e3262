/*
 * vcoll's MPI binding: a thin N-API layer over the MPI library (Open MPI or MPICH), used by
 * src/transports/mpi/. Everything here is synchronous and does exactly one MPI thing per call;
 * matching, contexts, promises and progress (polling MPI_Testsome from the event loop: Open MPI
 * has no progress thread) live in TypeScript.
 *
 * Handles: communicators are small integers into a table (0 is MPI_COMM_WORLD); pending
 * requests are slots of a request table (reused); matched probes (MPI_Improbe) are slots of a
 * message table until MPI_Imrecv takes them. Buffers are typed arrays (their memory does not
 * move while the JS side holds them, which it does until completion); a list of typed arrays is
 * one message through an hindexed datatype on MPI_BOTTOM (zero copy). Every communicator uses
 * MPI_ERRORS_RETURN: a failing call throws a JS Error carrying `mpiClass` (the error class
 * number) and `mpiClassName` ("MPI_ERR_TRUNCATE", ...), which the TypeScript side maps to
 * vcoll's typed errors.
 *
 * Calls that complete at once (recvBlocking, irecv with a spin, test) write their status to a
 * buffer registered once (statusBuffer) unless given one. The blocking point-to-point's
 * per-message path also has a V8-API twin, vcoll_mpi_fast.cc, which shares this module's
 * communicator table through the exported vcoll_mpi_comm.
 *
 * The watchdog (watchdog(ms)): calls that wait inside MPI (blocking point-to-point, the
 * library's collectives, communicator construction) cannot be timed out from JS, whose event
 * loop stands still meanwhile. Each such call marks itself in vcoll_mpi_watch (plain stores:
 * no system call, no lock); a thread of this module wakes every ms / 4 and, when one call has
 * stayed inside MPI for 4 of its ticks (between ms and 1.25 ms), prints
 * `vcoll: rank R failed: TimeoutError: …` and ends the process (_exit), which makes mpirun end
 * the job. vcoll_mpi_fast.cc marks its calls in the same record.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <mpi.h>
#include <node_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vcoll_mpi_internal.h"

/* ---------- tables ---------- */

static MPI_Comm *comms = NULL;
static int ncomms = 0, capcomms = 0;

static MPI_Request *reqs = NULL;
static MPI_Datatype *reqtypes = NULL; /* a derived datatype to free at completion, or MPI_DATATYPE_NULL */
static int *freeslots = NULL;
static int nreqs = 0, capreqs = 0, nfree = 0, nactive = 0;

static MPI_Message *msgs = NULL;
static int capmsgs = 0;

static int *idx_scratch = NULL;
static MPI_Status *st_scratch = NULL;
static int capscratch = 0;

/* ---------- errors ---------- */

static const char *class_name(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM";
    default: return "MPI_ERR_UNKNOWN";
  }
}

/* A JS Error for MPI error code `err` raised by `what` (with mpiClass and mpiClassName). */
static napi_value mpi_error(napi_env env, const char *what, int err) {
  char text[MPI_MAX_ERROR_STRING + 1];
  int len = 0, cls = MPI_ERR_UNKNOWN;
  if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) len = snprintf(text, sizeof text, "error %d", err);
  text[len] = 0;
  MPI_Error_class(err, &cls);
  char msg[MPI_MAX_ERROR_STRING + 128];
  snprintf(msg, sizeof msg, "%s failed: %s (%s)", what, text, class_name(cls));
  napi_value m, e, c, n;
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m);
  napi_create_error(env, NULL, m, &e);
  napi_create_int32(env, cls, &c);
  napi_set_named_property(env, e, "mpiClass", c);
  napi_create_string_utf8(env, class_name(cls), NAPI_AUTO_LENGTH, &n);
  napi_set_named_property(env, e, "mpiClassName", n);
  return e;
}

/* Throws mpi_error(what, err); returns NULL for the caller. */
VCOLL_INTERNAL napi_value throw_mpi(napi_env env, const char *what, int err) {
  napi_throw(env, mpi_error(env, what, err));
  return NULL;
}

VCOLL_INTERNAL napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

VCOLL_INTERNAL napi_value throw_range(napi_env env, const char *msg) {
  napi_throw_range_error(env, NULL, msg);
  return NULL;
}

#define CHECK_MPI(call, what)                          \
  do {                                                 \
    int rc_ = (call);                                  \
    if (rc_ != MPI_SUCCESS) return throw_mpi(env, what, rc_); \
  } while (0)

/* ---------- argument helpers ---------- */

VCOLL_INTERNAL napi_value undefined_value(napi_env env) {
  napi_value u;
  napi_get_undefined(env, &u);
  return u;
}

VCOLL_INTERNAL napi_value int_value(napi_env env, int64_t v) {
  napi_value r;
  napi_create_int64(env, v, &r);
  return r;
}

VCOLL_INTERNAL int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    throw_type(env, "vcoll_mpi: too few arguments");
    return 0;
  }
  return 1;
}

VCOLL_INTERNAL int get_int(napi_env env, napi_value v, int *out) {
  int32_t x;
  if (napi_get_value_int32(env, v, &x) != napi_ok) {
    throw_type(env, "vcoll_mpi: expected an integer");
    return 0;
  }
  *out = x;
  return 1;
}

static int get_comm(napi_env env, napi_value v, MPI_Comm *out) {
  int h;
  if (!get_int(env, v, &h)) return 0;
  if (h < 0 || h >= ncomms || comms[h] == MPI_COMM_NULL) {
    throw_range(env, "vcoll_mpi: not a live communicator handle");
    return 0;
  }
  *out = comms[h];
  return 1;
}

/*
 * The MPI_Comm of handle `h` (1) or 0 when it is not a live handle: the one symbol the fast
 * path module (vcoll_mpi_fast.cc) looks up in this one (dlopen RTLD_NOLOAD + dlsym), so both
 * use one table of communicators.
 */
__attribute__((visibility("default"))) int vcoll_mpi_comm(int h, MPI_Comm *out) {
  if (h < 0 || h >= ncomms || comms[h] == MPI_COMM_NULL) return 0;
  *out = comms[h];
  return 1;
}

/* The byte size of one element of a typed array type. */
static size_t element_size(napi_typedarray_type tt) {
  switch (tt) {
    case napi_int16_array: case napi_uint16_array: return 2;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: return 4;
    case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: return 8;
    default: return 1;
  }
}

/*
 * A typed array's bytes (null/undefined: NULL, 0 when `optional`). napi_get_typedarray_info is
 * asked first, without napi_is_typedarray (it fails on anything else), for only what is used:
 * the per-message path of the blocking point-to-point is a handful of these calls.
 */
VCOLL_INTERNAL int get_bytes(napi_env env, napi_value v, void **data, size_t *len, int optional) {
  napi_typedarray_type tt;
  size_t n;
  void *p;
  if (napi_get_typedarray_info(env, v, &tt, &n, &p, NULL, NULL) == napi_ok) {
    *data = p;
    *len = n * element_size(tt);
    return 1;
  }
  if (optional) {
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t == napi_null || t == napi_undefined) {
      *data = NULL;
      *len = 0;
      return 1;
    }
  }
  throw_type(env, "vcoll_mpi: expected a typed array");
  return 0;
}

VCOLL_INTERNAL int get_int32_array(napi_env env, napi_value v, int **data, size_t *n, int optional) {
  void *p;
  size_t len;
  if (!get_bytes(env, v, &p, &len, optional)) return 0;
  *data = (int *)p;
  *n = len / sizeof(int);
  return 1;
}

/*
 * The registered status buffer (statusBuffer(Int32Array(5))): where recvBlocking, irecv with a
 * spin and test write a completion when the caller passes no buffer of its own, which saves a
 * typed array lookup per call. A reference keeps it alive; its memory was moved off the V8 heap
 * by the lookup at registration (napi_get_typedarray_info materialises the ArrayBuffer), so the
 * pointer stays valid. One per process, as MPI is: the binding serves the thread that loaded it.
 */
static int *status_out = NULL;
static napi_ref status_ref = NULL;

static napi_value js_status_buffer(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int *out;
  size_t n;
  if (!get_args(env, info, 1, argv) || !get_int32_array(env, argv[0], &out, &n, 0)) return NULL;
  if (n < 5) return throw_range(env, "vcoll_mpi: statusBuffer needs an Int32Array of at least 5 elements");
  napi_ref ref;
  if (napi_create_reference(env, argv[0], 1, &ref) != napi_ok) return throw_type(env, "vcoll_mpi: cannot reference the status buffer");
  if (status_ref != NULL) napi_delete_reference(env, status_ref);
  status_ref = ref;
  status_out = out;
  return NULL;
}

/* errorOf(what, code) -> the Error that a failed call `what` with MPI error code `code` throws. */
static napi_value js_error_of(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  char what[64];
  size_t len;
  int code;
  if (!get_args(env, info, 2, argv) || !get_int(env, argv[1], &code)) return NULL;
  if (napi_get_value_string_utf8(env, argv[0], what, sizeof what, &len) != napi_ok) return throw_type(env, "vcoll_mpi: expected a string");
  return mpi_error(env, what, code);
}

/* argv[i] as a status buffer of at least 5 ints when given, else the registered one. */
static int get_status_out(napi_env env, size_t argc, napi_value *argv, size_t i, int **out) {
  if (argc > i) {
    napi_valuetype t;
    napi_typeof(env, argv[i], &t);
    if (t != napi_undefined) {
      size_t n;
      if (!get_int32_array(env, argv[i], out, &n, 0)) return 0;
      if (n < 5) {
        throw_range(env, "vcoll_mpi: status buffer too small (5 ints)");
        return 0;
      }
      return 1;
    }
  }
  if (status_out == NULL) {
    throw_range(env, "vcoll_mpi: no status buffer: pass one or register one with statusBuffer");
    return 0;
  }
  *out = status_out;
  return 1;
}

/*
 * A message buffer: one typed array (base = its data, count bytes of MPI_BYTE) or an array of
 * them (base = MPI_BOTTOM, one element of a committed hindexed datatype over their addresses).
 */
typedef struct {
  void *base;
  int count;
  MPI_Datatype type;
  int derived;
} msgbuf;

static int get_msgbuf(napi_env env, napi_value v, msgbuf *out) {
  bool arr = false;
  napi_typedarray_type tt;
  size_t n0;
  void *p0;
  /* The common case first, in one call: one typed array. */
  int typed = napi_get_typedarray_info(env, v, &tt, &n0, &p0, NULL, NULL) == napi_ok;
  if (!typed) napi_is_array(env, v, &arr);
  if (!arr) {
    void *p;
    size_t len;
    if (typed) {
      p = p0;
      len = n0 * element_size(tt);
    } else if (!get_bytes(env, v, &p, &len, 0)) {
      return 0;
    }
    if (len > INT_MAX) {
      throw_range(env, "vcoll_mpi: a message longer than 2^31 - 1 bytes (MPI int counts)");
      return 0;
    }
    out->base = p;
    out->count = (int)len;
    out->type = MPI_BYTE;
    out->derived = 0;
    return 1;
  }
  uint32_t n;
  napi_get_array_length(env, v, &n);
  int *lens = malloc(sizeof(int) * (n + 1));
  MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (n + 1));
  int k = 0;
  size_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    napi_value s;
    napi_get_element(env, v, i, &s);
    void *p;
    size_t len;
    if (!get_bytes(env, s, &p, &len, 0)) {
      free(lens);
      free(disp);
      return 0;
    }
    if (len == 0) continue;
    total += len;
    if (total > INT_MAX) {
      free(lens);
      free(disp);
      throw_range(env, "vcoll_mpi: a message longer than 2^31 - 1 bytes (MPI int counts)");
      return 0;
    }
    lens[k] = (int)len;
    MPI_Get_address(p, &disp[k]);
    k++;
  }
  MPI_Datatype t;
  int rc = MPI_Type_create_hindexed(k, lens, disp, MPI_BYTE, &t);
  free(lens);
  free(disp);
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
  if (rc != MPI_SUCCESS) {
    throw_mpi(env, "MPI_Type_create_hindexed", rc);
    return 0;
  }
  out->base = MPI_BOTTOM;
  out->count = 1;
  out->type = t;
  out->derived = 1;
  return 1;
}

static void free_msgbuf(msgbuf *b) {
  if (b->derived) MPI_Type_free(&b->type);
}

/* ---------- request slots ---------- */

VCOLL_INTERNAL int grow(void **p, int *cap, int need, size_t el) {
  if (need <= *cap) return 1;
  int c = *cap == 0 ? 64 : *cap;
  while (c < need) c *= 2;
  void *q = realloc(*p, el * (size_t)c);
  if (q == NULL) return 0;
  *p = q;
  *cap = c;
  return 1;
}

static int new_slot(void) {
  if (nfree > 0) return freeslots[--nfree];
  if (nreqs == capreqs) {
    int c = capreqs == 0 ? 64 : 2 * capreqs;
    MPI_Request *r = realloc(reqs, sizeof(MPI_Request) * (size_t)c);
    if (r == NULL) return -1;
    reqs = r;
    MPI_Datatype *t = realloc(reqtypes, sizeof(MPI_Datatype) * (size_t)c);
    if (t == NULL) return -1;
    reqtypes = t;
    int *f = realloc(freeslots, sizeof(int) * (size_t)c);
    if (f == NULL) return -1;
    freeslots = f;
    capreqs = c;
  }
  reqtypes[nreqs] = MPI_DATATYPE_NULL;
  return nreqs++;
}

static void release_slot(int s) {
  reqs[s] = MPI_REQUEST_NULL;
  if (reqtypes[s] != MPI_DATATYPE_NULL) MPI_Type_free(&reqtypes[s]);
  reqtypes[s] = MPI_DATATYPE_NULL;
  freeslots[nfree++] = s;
  nactive--;
}

/* The byte count of a completed receive. */
VCOLL_INTERNAL int status_bytes(MPI_Status *st, MPI_Datatype t) {
  int n = 0;
  if (t == MPI_DATATYPE_NULL) {
    MPI_Get_count(st, MPI_BYTE, &n);
  } else {
    MPI_Get_elements(st, t, &n);
  }
  return n == MPI_UNDEFINED ? -1 : n;
}

/* ---------- watchdog of the calls that wait inside MPI ---------- */

/* What the calling thread is waiting for inside MPI; read by the watchdog thread. Exported: the
   fast path (vcoll_mpi_fast.cc) marks its calls here too. Single writer: plain atomic stores. */
typedef struct {
  unsigned long seq; /* calls entered so far */
  int in;            /* 1 while inside a watched call */
  int peer;          /* the peer or root (-1: none, any) */
  int tag;           /* the MPI tag (-1: none, any) */
  const char *what;  /* the MPI function */
} vcoll_watch_t;

__attribute__((visibility("default"))) vcoll_watch_t vcoll_mpi_watch;

VCOLL_INTERNAL void watch_begin(const char *what, int peer, int tag) {
  vcoll_watch_t *w = &vcoll_mpi_watch;
  __atomic_store_n(&w->what, what, __ATOMIC_RELAXED);
  __atomic_store_n(&w->peer, peer, __ATOMIC_RELAXED);
  __atomic_store_n(&w->tag, tag, __ATOMIC_RELAXED);
  __atomic_store_n(&w->seq, __atomic_load_n(&w->seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&w->in, 1, __ATOMIC_RELEASE);
}

VCOLL_INTERNAL void watch_end(void) { __atomic_store_n(&vcoll_mpi_watch.in, 0, __ATOMIC_RELEASE); }

static long watch_ms = 0; /* 0: off */
static int watch_rank = -1;
static int watch_started = 0;

/* Ticks of ms / 4; a call still inside MPI, the same call, for 4 ticks ends the process. */
static void *watch_main(void *arg) {
  (void)arg;
  unsigned long last = 0;
  int stuck = 0;
  for (;;) {
    long ms = __atomic_load_n(&watch_ms, __ATOMIC_RELAXED);
    long tick = ms > 0 ? ms / 4 : 1000;
    if (tick < 1) tick = 1;
    struct timespec ts = {tick / 1000, (tick % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (ms <= 0) {
      stuck = 0;
      continue;
    }
    int in = __atomic_load_n(&vcoll_mpi_watch.in, __ATOMIC_ACQUIRE);
    unsigned long seq = __atomic_load_n(&vcoll_mpi_watch.seq, __ATOMIC_RELAXED);
    if (!in || seq != last) {
      last = seq;
      stuck = 0;
      continue;
    }
    if (++stuck < 4) continue;
    const char *what = __atomic_load_n(&vcoll_mpi_watch.what, __ATOMIC_RELAXED);
    int peer = __atomic_load_n(&vcoll_mpi_watch.peer, __ATOMIC_RELAXED);
    int tag = __atomic_load_n(&vcoll_mpi_watch.tag, __ATOMIC_RELAXED);
    char p[24], t[24];
    if (peer < 0) snprintf(p, sizeof p, "any"); else snprintf(p, sizeof p, "%d", peer);
    if (tag < 0) snprintf(t, sizeof t, "any"); else snprintf(t, sizeof t, "%d", tag);
    fprintf(stderr,
            "vcoll: rank %d failed: TimeoutError: timeout after %ld ms: rank %d waits inside %s (peer %s, MPI tag %s; a blocking MPI call: the job is ended)\n",
            watch_rank, ms, watch_rank, what == NULL ? "MPI" : what, p, t);
    fflush(stderr);
    fflush(stdout);
    _exit(1);
  }
  return NULL;
}

/* watchdog(ms, rank): ms > 0 starts (or retimes) the watchdog, 0 stops it. */
static napi_value js_watchdog(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int ms, rank;
  if (!get_args(env, info, 2, argv) || !get_int(env, argv[0], &ms) || !get_int(env, argv[1], &rank)) return NULL;
  if (ms < 0) return throw_range(env, "vcoll_mpi: watchdog(ms): ms must be >= 0");
  watch_rank = rank;
  __atomic_store_n(&watch_ms, (long)ms, __ATOMIC_RELAXED);
  if (ms > 0 && !watch_started) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    if (pthread_create(&t, &a, watch_main, NULL) != 0) {
      pthread_attr_destroy(&a);
      return throw_range(env, "vcoll_mpi: cannot start the watchdog thread");
    }
    pthread_attr_destroy(&a);
    watch_started = 1;
  }
  return undefined_value(env);
}

/* CHECK_MPI of a call that may wait inside MPI for other ranks, under the watchdog. */
#define WATCHED(call, what, peer, tag)                          \
  do {                                                          \
    watch_begin(what, peer, tag);                               \
    int rcw_ = (call);                                          \
    watch_end();                                                \
    if (rcw_ != MPI_SUCCESS) return throw_mpi(env, what, rcw_); \
  } while (0)

/* ---------- environment ---------- */


static napi_value js_init(napi_env env, napi_callback_info info) {
  int flag = 0;
  MPI_Initialized(&flag);
  int provided = MPI_THREAD_SINGLE;
  if (!flag) {
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return throw_mpi(env, "MPI_Init_thread", rc);
  } else {
    MPI_Query_thread(&provided);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (ncomms == 0) {
    if (!grow((void **)&comms, &capcomms, 1, sizeof(MPI_Comm))) return throw_range(env, "vcoll_mpi: out of memory");
    comms[0] = MPI_COMM_WORLD;
    ncomms = 1;
  }
  int rank, size, *tagub, tflag = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &tflag);
  char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int vlen = 0;
  MPI_Get_library_version(version, &vlen);
  version[vlen] = 0;
  while (vlen > 0 && (version[vlen - 1] == '\n' || version[vlen - 1] == ' ')) version[--vlen] = 0;
  char host[MPI_MAX_PROCESSOR_NAME + 1];
  int hlen = 0;
  MPI_Get_processor_name(host, &hlen);
  host[hlen] = 0;
  napi_value o, v;
  napi_create_object(env, &o);
  napi_set_named_property(env, o, "rank", int_value(env, rank));
  napi_set_named_property(env, o, "size", int_value(env, size));
  napi_set_named_property(env, o, "threadLevel", int_value(env, provided));
  napi_set_named_property(env, o, "tagUb", int_value(env, tflag ? *tagub : 32767));
  napi_create_string_utf8(env, version, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, o, "library", v);
  napi_create_string_utf8(env, host, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, o, "host", v);
  return o;
}

static napi_value js_finalize(napi_env env, napi_callback_info info) {
  int flag = 0;
  MPI_Finalized(&flag);
  if (!flag) CHECK_MPI(MPI_Finalize(), "MPI_Finalize");
  return undefined_value(env);
}

static napi_value js_abort(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  int code;
  if (!get_int(env, argv[0], &code)) return NULL;
  fflush(stdout);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
}

static napi_value js_wtime(napi_env env, napi_callback_info info) {
  napi_value r;
  napi_create_double(env, MPI_Wtime(), &r);
  return r;
}

static napi_value js_yield(napi_env env, napi_callback_info info) {
  sched_yield();
  return undefined_value(env);
}

/* ---------- communicators ---------- */

static napi_value new_comm(napi_env env, MPI_Comm c) {
  if (c == MPI_COMM_NULL) return int_value(env, -1);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  if (!grow((void **)&comms, &capcomms, ncomms + 1, sizeof(MPI_Comm))) return throw_range(env, "vcoll_mpi: out of memory");
  comms[ncomms] = c;
  return int_value(env, ncomms++);
}

static napi_value js_comm_dup(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  MPI_Comm c, d;
  if (!get_args(env, info, 1, argv) || !get_comm(env, argv[0], &c)) return NULL;
  WATCHED(MPI_Comm_dup(c, &d), "MPI_Comm_dup", -1, -1);
  return new_comm(env, d);
}

/* commCreateGroup(parent, ranks: Int32Array (ranks of parent, in the new order), tag) */
static napi_value js_comm_create_group(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  MPI_Comm c, d;
  int *ranks, tag;
  size_t n;
  if (!get_args(env, info, 3, argv) || !get_comm(env, argv[0], &c) || !get_int32_array(env, argv[1], &ranks, &n, 0) ||
      !get_int(env, argv[2], &tag))
    return NULL;
  MPI_Group pg, g;
  CHECK_MPI(MPI_Comm_group(c, &pg), "MPI_Comm_group");
  int rc = MPI_Group_incl(pg, (int)n, ranks, &g);
  MPI_Group_free(&pg);
  if (rc != MPI_SUCCESS) return throw_mpi(env, "MPI_Group_incl", rc);
  watch_begin("MPI_Comm_create_group", -1, tag);
  rc = MPI_Comm_create_group(c, g, tag, &d);
  watch_end();
  MPI_Group_free(&g);
  if (rc != MPI_SUCCESS) return throw_mpi(env, "MPI_Comm_create_group", rc);
  return new_comm(env, d);
}

static napi_value js_comm_split(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  MPI_Comm c, d;
  int color, key;
  if (!get_args(env, info, 3, argv) || !get_comm(env, argv[0], &c) || !get_int(env, argv[1], &color) || !get_int(env, argv[2], &key))
    return NULL;
  WATCHED(MPI_Comm_split(c, color < 0 ? MPI_UNDEFINED : color, key, &d), "MPI_Comm_split", -1, -1);
  return new_comm(env, d);
}

static napi_value js_comm_split_shared(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  MPI_Comm c, d;
  if (!get_args(env, info, 1, argv) || !get_comm(env, argv[0], &c)) return NULL;
  int rank;
  MPI_Comm_rank(c, &rank);
  WATCHED(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &d), "MPI_Comm_split_type", -1, -1);
  return new_comm(env, d);
}

/* intercommCreate(local, localLeader, peer, remoteLeader, tag) */
static napi_value js_intercomm_create(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  MPI_Comm local, peer, d;
  int ll, rl, tag;
  if (!get_args(env, info, 5, argv) || !get_comm(env, argv[0], &local) || !get_int(env, argv[1], &ll) || !get_comm(env, argv[2], &peer) ||
      !get_int(env, argv[3], &rl) || !get_int(env, argv[4], &tag))
    return NULL;
  WATCHED(MPI_Intercomm_create(local, ll, peer, rl, tag, &d), "MPI_Intercomm_create", rl, tag);
  return new_comm(env, d);
}

static napi_value js_intercomm_merge(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  MPI_Comm c, d;
  int high;
  if (!get_args(env, info, 2, argv) || !get_comm(env, argv[0], &c) || !get_int(env, argv[1], &high)) return NULL;
  WATCHED(MPI_Intercomm_merge(c, high, &d), "MPI_Intercomm_merge", -1, -1);
  return new_comm(env, d);
}

static napi_value js_comm_free(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int h;
  if (!get_args(env, info, 1, argv) || !get_int(env, argv[0], &h)) return NULL;
  if (h <= 0 || h >= ncomms || comms[h] == MPI_COMM_NULL) return throw_range(env, "vcoll_mpi: not a freeable communicator handle");
  CHECK_MPI(MPI_Comm_free(&comms[h]), "MPI_Comm_free");
  comms[h] = MPI_COMM_NULL;
  return undefined_value(env);
}

/* commInfo(h) -> [rank, size, remoteSize (0: intra)] */
static napi_value js_comm_info(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  MPI_Comm c;
  if (!get_args(env, info, 1, argv) || !get_comm(env, argv[0], &c)) return NULL;
  int rank, size, inter, rsize = 0;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  MPI_Comm_test_inter(c, &inter);
  if (inter) MPI_Comm_remote_size(c, &rsize);
  napi_value a;
  napi_create_array_with_length(env, 3, &a);
  napi_set_element(env, a, 0, int_value(env, rank));
  napi_set_element(env, a, 1, int_value(env, size));
  napi_set_element(env, a, 2, int_value(env, rsize));
  return a;
}

/* ---------- point-to-point ---------- */

/* The arguments of isend and sendBlocking: (comm, dest, tag, data). */
static int get_send_args(napi_env env, napi_callback_info info, MPI_Comm *c, int *dest, int *tag, msgbuf *b) {
  napi_value argv[4];
  return get_args(env, info, 4, argv) && get_comm(env, argv[0], c) && get_int(env, argv[1], dest) && get_int(env, argv[2], tag) &&
         get_msgbuf(env, argv[3], b);
}

/* isend(comm, dest, tag, data) -> slot, or -1 when the send completed at once (eager). */
static napi_value js_isend(napi_env env, napi_callback_info info) {
  MPI_Comm c;
  int dest, tag;
  msgbuf b;
  if (!get_send_args(env, info, &c, &dest, &tag, &b)) return NULL;
  MPI_Request r;
  int rc = MPI_Isend(b.base, b.count, b.type, dest, tag, c, &r);
  if (rc != MPI_SUCCESS) {
    free_msgbuf(&b);
    return throw_mpi(env, "MPI_Isend", rc);
  }
  int done = 0;
  rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    free_msgbuf(&b);
    return throw_mpi(env, "MPI_Isend", rc);
  }
  if (done) {
    free_msgbuf(&b);
    return int_value(env, -1);
  }
  int s = new_slot();
  if (s < 0) return throw_range(env, "vcoll_mpi: out of memory");
  reqs[s] = r;
  reqtypes[s] = b.derived ? b.type : MPI_DATATYPE_NULL;
  nactive++;
  return int_value(env, s);
}

static void put_status(int *out, int slot, MPI_Status *st, int err, MPI_Datatype t);
static void put_error(int *out, int slot, int rc);

/*
 * irecv(comm, source, tag, into, spinNs = 0, out?: Int32Array(5)) -> slot; with spinNs > 0 it
 * first repeats MPI_Test for up to spinNs ns (a blocking receive's progress, in the same call)
 * and returns -1 when the receive completed (out = -1, source, tag, bytes, error class).
 */
static napi_value js_irecv(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  size_t argc = 6;
  MPI_Comm c;
  int src, tag, spin = 0, *out = NULL;
  msgbuf b;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return throw_type(env, "vcoll_mpi: too few arguments");
  if (!get_comm(env, argv[0], &c) || !get_int(env, argv[1], &src) || !get_int(env, argv[2], &tag)) return NULL;
  if (argc >= 5) {
    if (!get_int(env, argv[4], &spin) || !get_status_out(env, argc, argv, 5, &out)) return NULL;
  }
  if (!get_msgbuf(env, argv[3], &b)) return NULL;
  MPI_Request r;
  int rc = MPI_Irecv(b.base, b.count, b.type, src < 0 ? MPI_ANY_SOURCE : src, tag < 0 ? MPI_ANY_TAG : tag, c, &r);
  if (rc != MPI_SUCCESS) {
    free_msgbuf(&b);
    return throw_mpi(env, "MPI_Irecv", rc);
  }
  if (spin > 0 && out != NULL) {
    MPI_Status st;
    int done = 0;
    double until = now_ns() + spin;
    for (int i = 0;; i++) {
      rc = MPI_Test(&r, &done, &st);
      if (rc != MPI_SUCCESS || done) break;
      if ((i & 15) == 15 && now_ns() > until) break;
    }
    if (rc != MPI_SUCCESS) {
      put_error(out, -1, rc);
      free_msgbuf(&b);
      return int_value(env, -1);
    }
    if (done) {
      put_status(out, -1, &st, MPI_SUCCESS, b.derived ? b.type : MPI_DATATYPE_NULL);
      free_msgbuf(&b);
      return int_value(env, -1);
    }
  }
  int s = new_slot();
  if (s < 0) return throw_range(env, "vcoll_mpi: out of memory");
  reqs[s] = r;
  reqtypes[s] = b.derived ? b.type : MPI_DATATYPE_NULL;
  nactive++;
  return int_value(env, s);
}

static void put_status(int *out, int slot, MPI_Status *st, int err, MPI_Datatype t) {
  out[0] = slot;
  out[1] = st->MPI_SOURCE;
  out[2] = st->MPI_TAG;
  out[3] = status_bytes(st, t);
  out[4] = err;
}

/* A request that failed with MPI error code `rc`: out = slot, -1, -1, -1, its error class. */
static void put_error(int *out, int slot, int rc) {
  int cls = MPI_ERR_UNKNOWN;
  MPI_Error_class(rc, &cls);
  out[0] = slot;
  out[1] = -1;
  out[2] = -1;
  out[3] = -1;
  out[4] = cls;
}

VCOLL_INTERNAL double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * test(slot, spinNs, out: Int32Array(5)) -> 1 when the request completed (out = slot, source,
 * tag, bytes, error class; the slot is released), 0 when it is still pending after spinning on
 * MPI_Test for up to spinNs nanoseconds (0: one test).
 */
static napi_value js_test(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  size_t argc = 3;
  int s, spin, *out;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return throw_type(env, "vcoll_mpi: too few arguments");
  if (!get_int(env, argv[0], &s) || !get_int(env, argv[1], &spin) || !get_status_out(env, argc, argv, 2, &out)) return NULL;
  if (s < 0 || s >= nreqs || reqs[s] == MPI_REQUEST_NULL) return throw_range(env, "vcoll_mpi: not a pending request slot");
  MPI_Status st;
  int done = 0, rc;
  double until = spin > 0 ? now_ns() + spin : 0;
  for (int i = 0;; i++) {
    rc = MPI_Test(&reqs[s], &done, &st);
    if (rc != MPI_SUCCESS || done) break;
    if (spin <= 0 || ((i & 15) == 15 && now_ns() > until)) break;
  }
  if (rc != MPI_SUCCESS) {
    /* The request completed in error (MPI_Test returns the error, the status holds nothing). */
    put_error(out, s, rc);
    release_slot(s);
    return int_value(env, 1);
  }
  if (!done) return int_value(env, 0);
  put_status(out, s, &st, MPI_SUCCESS, reqtypes[s]);
  release_slot(s);
  return int_value(env, 1);
}

/*
 * testsome(out: Int32Array, spinNs = 0) -> n: the pending requests that completed, 5 ints each
 * in out (slot, source, tag, bytes, error class); their slots are released. With spinNs > 0,
 * repeats MPI_Testsome for up to spinNs nanoseconds until one completes.
 */
static napi_value js_testsome(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int *out;
  size_t n;
  size_t argc = 2;
  int spin = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return throw_type(env, "vcoll_mpi: too few arguments");
  if (!get_int32_array(env, argv[0], &out, &n, 0)) return NULL;
  if (argc >= 2) {
    napi_valuetype t;
    napi_typeof(env, argv[1], &t);
    if (t != napi_undefined && !get_int(env, argv[1], &spin)) return NULL;
  }
  if (nactive == 0) return int_value(env, 0);
  int cap = capscratch;
  if (!grow((void **)&idx_scratch, &cap, nreqs, sizeof(int))) return throw_range(env, "vcoll_mpi: out of memory");
  int cap2 = capscratch;
  if (!grow((void **)&st_scratch, &cap2, nreqs, sizeof(MPI_Status))) return throw_range(env, "vcoll_mpi: out of memory");
  capscratch = cap;
  int outcount = 0;
  int rc;
  double until = spin > 0 ? now_ns() + spin : 0;
  for (int i = 0;; i++) {
    rc = MPI_Testsome(nreqs, reqs, &outcount, idx_scratch, st_scratch);
    if (rc != MPI_SUCCESS || (outcount != MPI_UNDEFINED && outcount > 0)) break;
    if (spin <= 0 || ((i & 15) == 15 && now_ns() > until)) break;
  }
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return throw_mpi(env, "MPI_Testsome", rc);
  if (outcount == MPI_UNDEFINED) return int_value(env, 0);
  int room = (int)(n / 5);
  if (outcount > room) return throw_range(env, "vcoll_mpi: testsome output buffer too small");
  for (int i = 0; i < outcount; i++) {
    int s = idx_scratch[i];
    int cls = MPI_SUCCESS;
    if (rc == MPI_ERR_IN_STATUS && st_scratch[i].MPI_ERROR != MPI_SUCCESS) MPI_Error_class(st_scratch[i].MPI_ERROR, &cls);
    put_status(out + 5 * i, s, &st_scratch[i], cls, reqtypes[s]);
    reqs[s] = MPI_REQUEST_NULL;
    release_slot(s);
  }
  return int_value(env, outcount);
}

/* cancel(slot): MPI_Cancel and free a pending request (a receive nobody will match, before MPI_Finalize). */
static napi_value js_cancel(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int s;
  if (!get_args(env, info, 1, argv) || !get_int(env, argv[0], &s)) return NULL;
  if (s < 0 || s >= nreqs || reqs[s] == MPI_REQUEST_NULL) return throw_range(env, "vcoll_mpi: not a pending request slot");
  MPI_Cancel(&reqs[s]);
  MPI_Request_free(&reqs[s]);
  release_slot(s);
  return undefined_value(env);
}

/* pending() -> the number of requests not yet completed. */
static napi_value js_pending(napi_env env, napi_callback_info info) {
  return int_value(env, nactive);
}

/*
 * improbe(comm, source, tag, out: Int32Array(3)) -> a message id (out = source, tag, bytes)
 * when a matching message is there (it is taken out of matching: only imrecv(id) receives it),
 * -1 otherwise.
 */
static napi_value js_improbe(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  MPI_Comm c;
  int src, tag, *out;
  size_t n;
  if (!get_args(env, info, 4, argv) || !get_comm(env, argv[0], &c) || !get_int(env, argv[1], &src) || !get_int(env, argv[2], &tag) ||
      !get_int32_array(env, argv[3], &out, &n, 0))
    return NULL;
  if (n < 3) return throw_range(env, "vcoll_mpi: improbe output buffer too small");
  int flag = 0;
  MPI_Message m;
  MPI_Status st;
  CHECK_MPI(MPI_Improbe(src < 0 ? MPI_ANY_SOURCE : src, tag < 0 ? MPI_ANY_TAG : tag, c, &flag, &m, &st), "MPI_Improbe");
  if (!flag) return int_value(env, -1);
  int id = -1;
  for (int i = 0; i < capmsgs; i++)
    if (msgs[i] == MPI_MESSAGE_NULL) {
      id = i;
      break;
    }
  if (id < 0) {
    int old = capmsgs;
    if (!grow((void **)&msgs, &capmsgs, old + 1, sizeof(MPI_Message))) return throw_range(env, "vcoll_mpi: out of memory");
    for (int i = old; i < capmsgs; i++) msgs[i] = MPI_MESSAGE_NULL;
    id = old;
  }
  msgs[id] = m;
  out[0] = st.MPI_SOURCE;
  out[1] = st.MPI_TAG;
  MPI_Get_count(&st, MPI_BYTE, &out[2]);
  return int_value(env, id);
}

/* imrecv(messageId, into) -> slot */
static napi_value js_imrecv(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int id;
  msgbuf b;
  if (!get_args(env, info, 2, argv) || !get_int(env, argv[0], &id)) return NULL;
  if (id < 0 || id >= capmsgs || msgs[id] == MPI_MESSAGE_NULL) return throw_range(env, "vcoll_mpi: not a matched message");
  if (!get_msgbuf(env, argv[1], &b)) return NULL;
  MPI_Request r;
  int rc = MPI_Imrecv(b.base, b.count, b.type, &msgs[id], &r);
  msgs[id] = MPI_MESSAGE_NULL;
  if (rc != MPI_SUCCESS) {
    free_msgbuf(&b);
    return throw_mpi(env, "MPI_Imrecv", rc);
  }
  int s = new_slot();
  if (s < 0) return throw_range(env, "vcoll_mpi: out of memory");
  reqs[s] = r;
  reqtypes[s] = b.derived ? b.type : MPI_DATATYPE_NULL;
  nactive++;
  return int_value(env, s);
}

/* ---------- the MPI library's own collectives (blocking, as applications call them) ---------- */

/* Whether a JS argument is null or undefined (a collective's "in place" buffer). */
static int is_nullish(napi_env env, napi_value v) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  return t == napi_null || t == napi_undefined;
}

/*
 * gatherv(comm, send|null, recv|null, counts|null, displs|null, root): byte counts and
 * displacements; send null at the root: MPI_IN_PLACE (its block already at displs[root] in recv).
 */
static napi_value js_gatherv(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl, nc, nd;
  int *counts, *displs, root, me;
  if (!get_args(env, info, 6, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 1) ||
      !get_bytes(env, argv[2], &rb, &rl, 1) || !get_int32_array(env, argv[3], &counts, &nc, 1) ||
      !get_int32_array(env, argv[4], &displs, &nd, 1) || !get_int(env, argv[5], &root))
    return NULL;
  if (sl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  CHECK_MPI(MPI_Comm_rank(c, &me), "MPI_Comm_rank");
  int in_place = is_nullish(env, argv[1]);
  if (in_place && me != root) return throw_type(env, "vcoll_mpi: gatherv: send may be null (in place) at the root only");
  WATCHED(MPI_Gatherv(in_place ? MPI_IN_PLACE : sb, (int)sl, MPI_BYTE, rb, counts, displs, MPI_BYTE, root, c), "MPI_Gatherv", root, -1);
  return undefined_value(env);
}

/*
 * scatterv(comm, send|null, counts|null, displs|null, recv|null, root); recv null at the root:
 * MPI_IN_PLACE (its block stays in send).
 */
static napi_value js_scatterv(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl, nc, nd;
  int *counts, *displs, root, me;
  if (!get_args(env, info, 6, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 1) ||
      !get_int32_array(env, argv[2], &counts, &nc, 1) || !get_int32_array(env, argv[3], &displs, &nd, 1) ||
      !get_bytes(env, argv[4], &rb, &rl, 1) || !get_int(env, argv[5], &root))
    return NULL;
  if (rl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  CHECK_MPI(MPI_Comm_rank(c, &me), "MPI_Comm_rank");
  int in_place = is_nullish(env, argv[4]);
  if (in_place && me != root) return throw_type(env, "vcoll_mpi: scatterv: recv may be null (in place) at the root only");
  WATCHED(MPI_Scatterv(sb, counts, displs, MPI_BYTE, in_place ? MPI_IN_PLACE : rb, (int)rl, MPI_BYTE, root, c), "MPI_Scatterv", root, -1);
  return undefined_value(env);
}

/* gather(comm, send, recv|null, root): every block has send's length */
static napi_value js_gather(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl;
  int root;
  if (!get_args(env, info, 4, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 0) ||
      !get_bytes(env, argv[2], &rb, &rl, 1) || !get_int(env, argv[3], &root))
    return NULL;
  if (sl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  WATCHED(MPI_Gather(sb, (int)sl, MPI_BYTE, rb, (int)sl, MPI_BYTE, root, c), "MPI_Gather", root, -1);
  return undefined_value(env);
}

/* scatter(comm, send|null, recv, root): every block has recv's length */
static napi_value js_scatter(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl;
  int root;
  if (!get_args(env, info, 4, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 1) ||
      !get_bytes(env, argv[2], &rb, &rl, 0) || !get_int(env, argv[3], &root))
    return NULL;
  if (rl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  WATCHED(MPI_Scatter(sb, (int)rl, MPI_BYTE, rb, (int)rl, MPI_BYTE, root, c), "MPI_Scatter", root, -1);
  return undefined_value(env);
}

static MPI_Op op_of(int k) {
  switch (k) {
    case 0: return MPI_SUM;
    case 1: return MPI_PROD;
    case 2: return MPI_MAX;
    case 3: return MPI_MIN;
    case 4: return MPI_BAND;
    case 5: return MPI_BOR;
    case 6: return MPI_BXOR;
    default: return MPI_OP_NULL;
  }
}

static MPI_Datatype type_of(int k) {
  switch (k) {
    case 0: return MPI_DOUBLE;
    case 1: return MPI_FLOAT;
    case 2: return MPI_INT32_T;
    case 3: return MPI_UINT32_T;
    case 4: return MPI_INT16_T;
    case 5: return MPI_UINT16_T;
    case 6: return MPI_INT8_T;
    case 7: return MPI_UINT8_T;
    case 8: return MPI_INT64_T;
    case 9: return MPI_UINT64_T;
    default: return MPI_DATATYPE_NULL;
  }
}

/* allreduce(comm, send|null (in place), recv, count, type code, op code) */
static napi_value js_allreduce(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl;
  int count, t, o;
  if (!get_args(env, info, 6, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 1) ||
      !get_bytes(env, argv[2], &rb, &rl, 0) || !get_int(env, argv[3], &count) || !get_int(env, argv[4], &t) || !get_int(env, argv[5], &o))
    return NULL;
  MPI_Datatype type = type_of(t);
  MPI_Op op = op_of(o);
  if (type == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return throw_range(env, "vcoll_mpi: unknown datatype or operation code");
  WATCHED(MPI_Allreduce(sb == NULL ? MPI_IN_PLACE : sb, rb, count, type, op, c), "MPI_Allreduce", -1, -1);
  return undefined_value(env);
}

static napi_value js_barrier(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  MPI_Comm c;
  if (!get_args(env, info, 1, argv) || !get_comm(env, argv[0], &c)) return NULL;
  WATCHED(MPI_Barrier(c), "MPI_Barrier", -1, -1);
  return undefined_value(env);
}

/* allgather(comm, send, recv): recv holds (remote) size blocks of send's length */
static napi_value js_allgather(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl;
  if (!get_args(env, info, 3, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 0) ||
      !get_bytes(env, argv[2], &rb, &rl, 0))
    return NULL;
  if (sl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  WATCHED(MPI_Allgather(sb, (int)sl, MPI_BYTE, rb, (int)sl, MPI_BYTE, c), "MPI_Allgather", -1, -1);
  return undefined_value(env);
}

/* allgatherv(comm, send, recv, counts, displs) */
static napi_value js_allgatherv(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  MPI_Comm c;
  void *sb, *rb;
  size_t sl, rl, nc, nd;
  int *counts, *displs;
  if (!get_args(env, info, 5, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sb, &sl, 0) ||
      !get_bytes(env, argv[2], &rb, &rl, 0) || !get_int32_array(env, argv[3], &counts, &nc, 0) || !get_int32_array(env, argv[4], &displs, &nd, 0))
    return NULL;
  if (sl > INT_MAX) return throw_range(env, "vcoll_mpi: a block longer than 2^31 - 1 bytes");
  WATCHED(MPI_Allgatherv(sb, (int)sl, MPI_BYTE, rb, counts, displs, MPI_BYTE, c), "MPI_Allgatherv", -1, -1);
  return undefined_value(env);
}

/* ---------- blocking point-to-point (MPI_Send / MPI_Recv: the caller's thread waits in MPI) ---------- */

/* sendBlocking(comm, dest, tag, data) */
static napi_value js_send_blocking(napi_env env, napi_callback_info info) {
  MPI_Comm c;
  int dest, tag;
  msgbuf b;
  if (!get_send_args(env, info, &c, &dest, &tag, &b)) return NULL;
  watch_begin("MPI_Send", dest, tag);
  int rc = MPI_Send(b.base, b.count, b.type, dest, tag, c);
  watch_end();
  free_msgbuf(&b);
  if (rc != MPI_SUCCESS) return throw_mpi(env, "MPI_Send", rc);
  return NULL; /* undefined */
}

/*
 * recvBlocking(comm, source, tag, into, out?: Int32Array(5)): out (default: the registered
 * status buffer) = -1, source, tag, bytes, error class
 */
static napi_value js_recv_blocking(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  size_t argc = 5;
  MPI_Comm c;
  int src, tag, *out;
  msgbuf b;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4) return throw_type(env, "vcoll_mpi: too few arguments");
  if (!get_comm(env, argv[0], &c) || !get_int(env, argv[1], &src) || !get_int(env, argv[2], &tag) ||
      !get_status_out(env, argc, argv, 4, &out) || !get_msgbuf(env, argv[3], &b))
    return NULL;
  MPI_Status st;
  watch_begin("MPI_Recv", src, tag);
  int rc = MPI_Recv(b.base, b.count, b.type, src < 0 ? MPI_ANY_SOURCE : src, tag < 0 ? MPI_ANY_TAG : tag, c, &st);
  watch_end();
  if (rc != MPI_SUCCESS) {
    put_error(out, -1, rc);
  } else {
    put_status(out, -1, &st, MPI_SUCCESS, b.derived ? b.type : MPI_DATATYPE_NULL);
  }
  free_msgbuf(&b);
  return NULL; /* undefined */
}

/* ---------- benchmark support: a ping-pong loop entirely in C (the reference of bench:mpi) ---------- */

/* pingpongC(comm, peer, bytes, iterations, first) -> seconds per round trip */
static napi_value js_pingpong_c(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  MPI_Comm c;
  int peer, bytes, iters, first;
  if (!get_args(env, info, 5, argv) || !get_comm(env, argv[0], &c) || !get_int(env, argv[1], &peer) || !get_int(env, argv[2], &bytes) ||
      !get_int(env, argv[3], &iters) || !get_int(env, argv[4], &first))
    return NULL;
  char *buf = calloc(bytes > 0 ? bytes : 1, 1);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (first) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, c);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, c, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, c, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, c);
    }
  }
  double t = (MPI_Wtime() - t0) / (iters > 0 ? iters : 1);
  free(buf);
  napi_value r;
  napi_create_double(env, t, &r);
  return r;
}

/* gathervLoopC(comm, send, recv, counts, displs, root, iterations) -> seconds per MPI_Gatherv, back to back (the reference of bench:mpi-schedule) */
static napi_value js_gatherv_loop_c(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  MPI_Comm c;
  void *sp, *rp;
  size_t sl, rl, nc, nd;
  int *counts, *displs, root, iters;
  if (!get_args(env, info, 7, argv) || !get_comm(env, argv[0], &c) || !get_bytes(env, argv[1], &sp, &sl, 0) || !get_bytes(env, argv[2], &rp, &rl, 1) ||
      !get_int32_array(env, argv[3], &counts, &nc, 1) || !get_int32_array(env, argv[4], &displs, &nd, 1) || !get_int(env, argv[5], &root) ||
      !get_int(env, argv[6], &iters))
    return NULL;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    int rc = MPI_Gatherv(sp, (int)sl, MPI_BYTE, rp, counts, displs, MPI_BYTE, root, c);
    if (rc != MPI_SUCCESS) return throw_mpi(env, "MPI_Gatherv", rc);
  }
  double t = (MPI_Wtime() - t0) / (iters > 0 ? iters : 1);
  napi_value r;
  napi_create_double(env, t, &r);
  return r;
}

/* ---------- module ---------- */

#define FN(name, fn) {name, NULL, fn, NULL, NULL, NULL, napi_default, NULL}

static napi_value module_init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      FN("init", js_init),
      FN("finalize", js_finalize),
      FN("abort", js_abort),
      FN("wtime", js_wtime),
      FN("yieldCpu", js_yield),
      FN("commDup", js_comm_dup),
      FN("commCreateGroup", js_comm_create_group),
      FN("commSplit", js_comm_split),
      FN("commSplitShared", js_comm_split_shared),
      FN("intercommCreate", js_intercomm_create),
      FN("intercommMerge", js_intercomm_merge),
      FN("commFree", js_comm_free),
      FN("commInfo", js_comm_info),
      FN("isend", js_isend),
      FN("irecv", js_irecv),
      FN("test", js_test),
      FN("statusBuffer", js_status_buffer),
      FN("errorOf", js_error_of),
      FN("testsome", js_testsome),
      FN("pending", js_pending),
      FN("cancel", js_cancel),
      FN("improbe", js_improbe),
      FN("imrecv", js_imrecv),
      FN("gatherv", js_gatherv),
      FN("scatterv", js_scatterv),
      FN("gather", js_gather),
      FN("scatter", js_scatter),
      FN("allreduce", js_allreduce),
      FN("barrier", js_barrier),
      FN("allgather", js_allgather),
      FN("allgatherv", js_allgatherv),
      FN("pingpongC", js_pingpong_c),
      FN("gathervLoopC", js_gatherv_loop_c),
      FN("sendBlocking", js_send_blocking),
      FN("recvBlocking", js_recv_blocking),
      FN("watchdog", js_watchdog),
      FN("schedCreate", js_sched_create),
      FN("schedRun", js_sched_run),
      FN("schedFree", js_sched_free),
      FN("schedRunOnce", js_sched_run_once),
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  /* Error class numbers differ between libraries (MPI_ERR_TRUNCATE is 15 in Open MPI, 14 in MPICH). */
  napi_set_named_property(env, exports, "ERR_TRUNCATE", int_value(env, MPI_ERR_TRUNCATE));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, module_init)
