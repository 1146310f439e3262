/*
 * What vcoll_mpi.c shares with the other C files of the same module (vcoll_mpi_schedule.c,
 * vcoll_mpi_combine.c):
 * argument helpers, errors, the watchdog's marks, the request-table growth helper and the
 * communicator table. Hidden from other modules (one N-API module, several files).
 */
#ifndef VCOLL_MPI_INTERNAL_H
#define VCOLL_MPI_INTERNAL_H

#include <mpi.h>
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

#define VCOLL_INTERNAL __attribute__((visibility("hidden")))

VCOLL_INTERNAL napi_value throw_mpi(napi_env env, const char *what, int err);
VCOLL_INTERNAL napi_value throw_type(napi_env env, const char *msg);
VCOLL_INTERNAL napi_value throw_range(napi_env env, const char *msg);
VCOLL_INTERNAL napi_value undefined_value(napi_env env);
VCOLL_INTERNAL napi_value int_value(napi_env env, int64_t v);
VCOLL_INTERNAL int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv);
VCOLL_INTERNAL int get_int(napi_env env, napi_value v, int *out);
VCOLL_INTERNAL int get_bytes(napi_env env, napi_value v, void **data, size_t *len, int optional);
VCOLL_INTERNAL int get_int32_array(napi_env env, napi_value v, int **data, size_t *n, int optional);
VCOLL_INTERNAL int grow(void **p, int *cap, int need, size_t el);
VCOLL_INTERNAL int status_bytes(MPI_Status *st, MPI_Datatype t);
VCOLL_INTERNAL void watch_begin(const char *what, int peer, int tag);
VCOLL_INTERNAL void watch_end(void);
VCOLL_INTERNAL double now_ns(void);

/* The MPI_Comm of handle h (1), or 0 when it is not a live handle (exported for vcoll_mpi_fast.cc too). */
int vcoll_mpi_comm(int h, MPI_Comm *out);

/* vcoll_mpi_schedule.c: schedules (src/comm/schedule.ts) made and run in C. */
VCOLL_INTERNAL napi_value js_sched_create(napi_env env, napi_callback_info info);
VCOLL_INTERNAL napi_value js_sched_run(napi_env env, napi_callback_info info);
VCOLL_INTERNAL napi_value js_sched_free(napi_env env, napi_callback_info info);
VCOLL_INTERNAL napi_value js_sched_run_once(napi_env env, napi_callback_info info);

/*
 * vcoll_mpi_combine.c: the built-in operators of combine operations (into := into ⊕ from,
 * n elements), as src/collectives/basic/ops.ts defines them. Codes as the schedule encoding
 * (vcoll_mpi_schedule.c, src/transports/mpi/endpoint.ts): op sum 0, prod 1, min 2, max 3,
 * band 4, bor 5, bxor 6; type Int8 0, Uint8 1, Uint8Clamped 2, Int16 3, Uint16 4, Int32 5,
 * Uint32 6, Float32 7, Float64 8, BigInt64 9, BigUint64 10.
 */
#define VCOLL_COMBINE_OPS 7
#define VCOLL_COMBINE_TYPES 11
typedef void (*vcoll_combine_fn)(unsigned char *into, const unsigned char *from, size_t n);
/* The operator's function and (elbytes) the element's size, or NULL: no such operator (a bitwise one on floats). */
VCOLL_INTERNAL vcoll_combine_fn vcoll_combine_resolve(int op, int type, size_t *elbytes);

#endif
