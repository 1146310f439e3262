/*
 * vcoll_mpi_fast: the per-message path of vcoll's blocking point-to-point (mpiBlocking:
 * MPI_Send / MPI_Recv of one Uint8Array) written against V8's own API instead of N-API.
 *
 * Why: a ping-pong of 8 bytes costs a C program about 0.2 µs one way on one machine; each
 * N-API call adds about 50 ns of its own (the napi_env callback wrapper and one call per
 * argument conversion), twice per one-way message. V8's FunctionCallbackInfo is read directly
 * here, which halves that (measured side by side by `npm run bench:mpi-pingpong`, variants
 * "vcoll blocking" and "vcoll blocking (N-API)").
 *
 * It is an optional companion of vcoll_mpi.node (built by the same `npm run build:mpi`): it
 * holds no MPI state of its own. link(path) finds vcoll_mpi.node's communicator table through
 * its exported vcoll_mpi_comm (dlopen RTLD_NOLOAD + dlsym on the module Node already loaded),
 * so handles mean the same in both. V8's API ties the build to the Node version it was built
 * for: when it does not load, vcoll uses the N-API functions (same results, slower), and
 * VCOLL_MPI_FAST=0 makes it do so on purpose.
 *
 *   link(path)                                   -> undefined (throws when not found)
 *   statusBuffer(out: Int32Array(>= 5))          -> undefined; kept alive, written by recvBlocking
 *   sendBlocking(comm, dest, tag, data)          -> 0, or the MPI error code of MPI_Send
 *   recvBlocking(comm, source, tag, into)        -> undefined; status buffer = -1, source, tag,
 *                                                   bytes, error class (0: MPI_SUCCESS)
 *   schedRun(handle, spinNs, tagShift)           -> vcoll_mpi_schedule.c's schedRun: 1 done,
 *                                                   0 running, -1 failed, -2 / -3 bad handle
 *
 * Both mark themselves in vcoll_mpi.c's watchdog record (vcoll_mpi_watch, found by link).
 * source / tag < 0 mean MPI_ANY_SOURCE / MPI_ANY_TAG. Arguments are checked (a TypeError /
 * RangeError otherwise); vcoll's MpiEndpoint has already checked ranks and tags.
 */

#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <node.h>

namespace {

using v8::ArrayBuffer;
using v8::Exception;
using v8::FunctionCallbackInfo;
using v8::Global;
using v8::Int32;
using v8::Int32Array;
using v8::Isolate;
using v8::Local;
using v8::String;
using v8::Uint8Array;
using v8::Value;

typedef int (*CommLookup)(int, MPI_Comm*);
typedef int (*SchedRun)(int, int, int);

/* vcoll_mpi.c's watchdog record (same layout): calls waiting inside MPI mark themselves in it. */
struct Watch {
  unsigned long seq;
  int in;
  int peer;
  int tag;
  const char* what;
};

CommLookup comm_of = nullptr;
SchedRun sched_run = nullptr;
Watch* watch = nullptr;

inline void WatchBegin(const char* what, int peer, int tag) {
  Watch* w = watch;
  if (w == nullptr) return;
  __atomic_store_n(&w->what, what, __ATOMIC_RELAXED);
  __atomic_store_n(&w->peer, peer, __ATOMIC_RELAXED);
  __atomic_store_n(&w->tag, tag, __ATOMIC_RELAXED);
  __atomic_store_n(&w->seq, __atomic_load_n(&w->seq, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&w->in, 1, __ATOMIC_RELEASE);
}

inline void WatchEnd() {
  if (watch != nullptr) __atomic_store_n(&watch->in, 0, __ATOMIC_RELEASE);
}
int* status_out = nullptr;
/* Never destroyed: a Global reset after the isolate is gone (at exit) would crash. */
Global<Int32Array>* status_keep = nullptr;

void ThrowType(Isolate* iso, const char* msg) {
  iso->ThrowException(Exception::TypeError(String::NewFromUtf8(iso, msg).ToLocalChecked()));
}

void ThrowRange(Isolate* iso, const char* msg) {
  iso->ThrowException(Exception::RangeError(String::NewFromUtf8(iso, msg).ToLocalChecked()));
}

void Link(const FunctionCallbackInfo<Value>& args) {
  Isolate* iso = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsString()) return ThrowType(iso, "vcoll_mpi_fast: link(path) needs the path of vcoll_mpi.node");
  String::Utf8Value path(iso, args[0]);
  void* lib = dlopen(*path, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return ThrowRange(iso, "vcoll_mpi_fast: vcoll_mpi.node is not loaded from that path");
  void* sym = dlsym(lib, "vcoll_mpi_comm");
  watch = static_cast<Watch*>(dlsym(lib, "vcoll_mpi_watch")); /* absent in older builds: no marks */
  sched_run = reinterpret_cast<SchedRun>(dlsym(lib, "vcoll_mpi_sched_run")); /* absent in older builds */
  dlclose(lib); /* drops only the reference taken above: Node keeps the module loaded */
  if (sym == nullptr) return ThrowRange(iso, "vcoll_mpi_fast: vcoll_mpi.node has no vcoll_mpi_comm (rebuild both with npm run build:mpi)");
  comm_of = reinterpret_cast<CommLookup>(sym);
}

void StatusBuffer(const FunctionCallbackInfo<Value>& args) {
  Isolate* iso = args.GetIsolate();
  if (args.Length() < 1 || !args[0]->IsInt32Array()) return ThrowType(iso, "vcoll_mpi_fast: statusBuffer needs an Int32Array");
  Local<Int32Array> a = args[0].As<Int32Array>();
  if (a->Length() < 5) return ThrowRange(iso, "vcoll_mpi_fast: statusBuffer needs an Int32Array of at least 5 elements");
  /* Buffer() moves a small array's memory off the V8 heap for good: the pointer stays valid. */
  int* p = reinterpret_cast<int*>(static_cast<char*>(a->Buffer()->Data()) + a->ByteOffset());
  if (status_keep == nullptr) status_keep = new Global<Int32Array>();
  status_keep->Reset(iso, a);
  status_out = p;
}

/*
 * The last Uint8Array seen by sendBlocking (slot 0) and by recvBlocking (slot 1), with its
 * memory: a loop that sends from, or receives into, the same array again skips V8's
 * Buffer() / ByteOffset() / ByteLength() (a fifth of the call's cost). Weak handles: the cache
 * keeps nothing alive, and a collected array empties its slot. Safe because a typed array
 * over a non-resizable ArrayBuffer (the only kind cached) keeps its bytes where they are
 * until the buffer is detached, which is checked on every hit.
 */
struct CachedView {
  Global<Uint8Array> array;
  Global<ArrayBuffer> buffer;
  void* data = nullptr;
  int count = 0;
};
CachedView* cache[2] = {nullptr, nullptr};

bool View(Isolate* iso, Local<Value> v, int slot, void** data, int* count) {
  CachedView* c = cache[slot];
  if (c != nullptr && !c->array.IsEmpty() && c->array == v && !c->buffer.Get(iso)->WasDetached()) {
    *data = c->data;
    *count = c->count;
    return true;
  }
  if (!v->IsUint8Array()) {
    ThrowType(iso, "vcoll_mpi_fast: expected (comm, rank, tag: int32, data: Uint8Array)");
    return false;
  }
  Local<Uint8Array> a = v.As<Uint8Array>();
  size_t len = a->ByteLength();
  if (len > INT_MAX) {
    ThrowRange(iso, "vcoll_mpi_fast: a message longer than 2^31 - 1 bytes (MPI int counts)");
    return false;
  }
  Local<ArrayBuffer> ab = a->Buffer();
  *data = static_cast<char*>(ab->Data()) + a->ByteOffset();
  *count = static_cast<int>(len);
  if (!ab->GetBackingStore()->IsResizableByUserJavaScript()) {
    if (c == nullptr) c = cache[slot] = new CachedView(); /* never freed, as status_keep */
    c->array.Reset(iso, a);
    c->array.SetWeak();
    c->buffer.Reset(iso, ab);
    c->buffer.SetWeak();
    c->data = *data;
    c->count = *count;
  }
  return true;
}

/* The common checks of sendBlocking / recvBlocking: comm, rank, tag, one Uint8Array. */
bool Args(const FunctionCallbackInfo<Value>& args, int slot, MPI_Comm* c, int* peer, int* tag, void** data, int* count) {
  Isolate* iso = args.GetIsolate();
  if (args.Length() < 4 || !args[0]->IsInt32() || !args[1]->IsInt32() || !args[2]->IsInt32()) {
    ThrowType(iso, "vcoll_mpi_fast: expected (comm, rank, tag: int32, data: Uint8Array)");
    return false;
  }
  if (comm_of == nullptr || !comm_of(args[0].As<Int32>()->Value(), c)) {
    ThrowRange(iso, comm_of == nullptr ? "vcoll_mpi_fast: not linked (call link first)" : "vcoll_mpi_fast: not a live communicator handle");
    return false;
  }
  if (!View(iso, args[3], slot, data, count)) return false;
  *peer = args[1].As<Int32>()->Value();
  *tag = args[2].As<Int32>()->Value();
  return true;
}

void SendBlocking(const FunctionCallbackInfo<Value>& args) {
  MPI_Comm c;
  int dest, tag, count;
  void* data;
  if (!Args(args, 0, &c, &dest, &tag, &data, &count)) return;
  WatchBegin("MPI_Send", dest, tag);
  int rc = MPI_Send(data, count, MPI_BYTE, dest, tag, c);
  WatchEnd();
  args.GetReturnValue().Set(rc);
}

void RecvBlocking(const FunctionCallbackInfo<Value>& args) {
  MPI_Comm c;
  int src, tag, count;
  void* data;
  if (status_out == nullptr) return ThrowRange(args.GetIsolate(), "vcoll_mpi_fast: no status buffer (call statusBuffer first)");
  if (!Args(args, 1, &c, &src, &tag, &data, &count)) return;
  MPI_Status st;
  WatchBegin("MPI_Recv", src, tag);
  int rc = MPI_Recv(data, count, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, tag < 0 ? MPI_ANY_TAG : tag, c, &st);
  WatchEnd();
  int* out = status_out;
  out[0] = -1;
  if (rc != MPI_SUCCESS) {
    int cls = MPI_ERR_UNKNOWN;
    MPI_Error_class(rc, &cls);
    out[1] = -1;
    out[2] = -1;
    out[3] = -1;
    out[4] = cls;
    return;
  }
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  out[1] = st.MPI_SOURCE;
  out[2] = st.MPI_TAG;
  out[3] = n;
  out[4] = MPI_SUCCESS;
}

/*
 * schedRun(handle, spinNs, tagShift) -> vcoll_mpi_schedule.c's schedRun without N-API: 1 done,
 * 0 running, -1 failed (the schedule's info written), -2 not a live handle, -3 failed earlier.
 */
void SchedRunFast(const FunctionCallbackInfo<Value>& args) {
  Isolate* iso = args.GetIsolate();
  if (sched_run == nullptr) return ThrowRange(iso, "vcoll_mpi_fast: vcoll_mpi.node has no schedules (rebuild both with npm run build:mpi)");
  if (args.Length() < 3 || !args[0]->IsInt32() || !args[1]->IsInt32() || !args[2]->IsInt32()) {
    return ThrowType(iso, "vcoll_mpi_fast: schedRun expects (handle, spinNs, tagShift: int32)");
  }
  args.GetReturnValue().Set(sched_run(args[0].As<Int32>()->Value(), args[1].As<Int32>()->Value(), args[2].As<Int32>()->Value()));
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  NODE_SET_METHOD(exports, "link", Link);
  NODE_SET_METHOD(exports, "statusBuffer", StatusBuffer);
  NODE_SET_METHOD(exports, "sendBlocking", SendBlocking);
  NODE_SET_METHOD(exports, "recvBlocking", RecvBlocking);
  NODE_SET_METHOD(exports, "schedRun", SchedRunFast);
}
