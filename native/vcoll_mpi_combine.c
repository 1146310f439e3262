/*
 * vcoll's MPI binding, part 3: the built-in reduction operators of a schedule's combine
 * operations (src/comm/schedule.ts CombineOp, run by vcoll_mpi_schedule.c), `into := into ⊕
 * from` element by element, with exactly the results of their JavaScript definitions
 * (src/collectives/basic/ops.ts, on the typed array named by the element type):
 *
 * - sum / prod of integers wrap like the element type: ECMAScript's ToInt8 … ToUint32 of the
 *   exact result (ECMA-262 §7.1; 32-bit prod is Math.imul, §21.3.2.19) and BigInt.asIntN /
 *   asUintN(64) for the BigInt arrays are the result modulo 2^bits, which is what unsigned
 *   arithmetic in C gives (C11 §6.2.5p9) — so the arithmetic is done in unsigned types, wide
 *   enough that no promotion to int can overflow (C11 §6.3.1.1, §6.5p5);
 * - Uint8ClampedArray saturates (ToUint8Clamp, ECMA-262 §7.1.12): sum and prod clamp to 255;
 * - Float64 sum / prod are IEEE 754 double operations; Float32 ones are done in double and
 *   rounded to float, as JavaScript does (reading a Float32Array gives a double, storing
 *   rounds), which equals float arithmetic for + and × (Figueroa, "When is double rounding
 *   innocuous?", SIGNUM 1995: p ≥ 2q + 2 bits);
 * - min / max follow Math.min / Math.max (ECMA-262 §21.3.2.24 / .25): a NaN operand gives NaN,
 *   −0 is less than +0; the BigInt arrays compare as signed (BigInt64) or unsigned (BigUint64)
 *   integers, the others as their numbers;
 * - band / bor / bxor on the integer types only (not defined on floats: ops.ts rejects them).
 *
 * NaN bit patterns are implementation-defined in ECMAScript (§6.1.6.1: a Float32Array or
 * Float64Array shows them); here they are V8's on x86-64. Math.min / max with a NaN operand
 * return a NaN V8 makes as 0 / 0 (its code generator's out-of-line NaN: xorpd, divsd), the
 * machine's default NaN (x86: 0xFFF8000000000000, negative); so do these. A sum or product
 * with one NaN operand is that NaN, quieted (IEEE 754-2008 §6.2.3); with two, V8 gives the
 * left operand's (into's) in optimized code but the right operand's in its interpreter, so no
 * executor can match it bit for bit there: these give into's (the optimized code's, and the
 * x86 rule for the first operand), written out so that no operand order the compiler picks
 * changes it.
 *
 * Elements are read and written with memcpy (no alignment or aliasing assumption; the
 * compiler makes them plain loads and stores), one element at a time in increasing order, as
 * the JavaScript loops do. Floating-point arithmetic is IEC 60559's (C11 Annex F: overflow
 * gives ±∞, a narrowing conversion rounds), evaluated in its own type (FLT_EVAL_METHOD 0: no
 * x87 excess precision, which would round twice).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vcoll_mpi_internal.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "vcoll_mpi_combine.c needs FLT_EVAL_METHOD 0 (SSE2 or another IEEE 754 unit without excess precision)"
#endif

/* One loop: element type T (the storage), r := EXPR(a, b) computed from a (into) and b (from). */
#define KERNEL(NAME, T, EXPR)                                                   \
  static void NAME(unsigned char *into, const unsigned char *from, size_t n) { \
    for (size_t i = 0; i < n; i++) {                                            \
      T a, b, r;                                                                \
      memcpy(&a, into + i * sizeof(T), sizeof(T));                              \
      memcpy(&b, from + i * sizeof(T), sizeof(T));                              \
      r = (T)(EXPR);                                                            \
      memcpy(into + i * sizeof(T), &r, sizeof(T));                              \
    }                                                                           \
  }

/*
 * Integers: U the unsigned type of the width (sum, prod, bitwise: the bits are the same for a
 * signed element), S the type min / max compare in, W an unsigned type at least as wide as
 * int, so that a product never overflows a signed int after promotion.
 */
#define INTEGER_KERNELS(SUF, U, S, W)                                     \
  KERNEL(sum_##SUF, U, (W)a + (W)b)                                       \
  KERNEL(prod_##SUF, U, (W)a * (W)b)                                      \
  KERNEL(min_##SUF, S, b < a ? b : a)                                     \
  KERNEL(max_##SUF, S, b > a ? b : a)                                     \
  KERNEL(band_##SUF, U, a & b)                                            \
  KERNEL(bor_##SUF, U, a | b)                                             \
  KERNEL(bxor_##SUF, U, a ^ b)

INTEGER_KERNELS(i8, uint8_t, int8_t, uint32_t)
INTEGER_KERNELS(u8, uint8_t, uint8_t, uint32_t)
INTEGER_KERNELS(i16, uint16_t, int16_t, uint32_t)
INTEGER_KERNELS(u16, uint16_t, uint16_t, uint32_t)
INTEGER_KERNELS(i32, uint32_t, int32_t, uint32_t)
INTEGER_KERNELS(u32, uint32_t, uint32_t, uint32_t)
INTEGER_KERNELS(i64, uint64_t, int64_t, uint64_t)
INTEGER_KERNELS(u64, uint64_t, uint64_t, uint64_t)

/* Uint8ClampedArray: sum and prod saturate at 255 (operands are 0..255: no other clamp) */
static inline uint32_t clamp255(uint32_t x) { return x > 255u ? 255u : x; }
KERNEL(sum_u8c, uint8_t, clamp255((uint32_t)a + (uint32_t)b))
KERNEL(prod_u8c, uint8_t, clamp255((uint32_t)a * (uint32_t)b))

/* The NaN Math.min / max give (V8: 0 / 0 computed at run time), set by vcoll_combine_resolve. */
static double default_nan;

static double make_default_nan(void) {
  volatile double zero = 0.0; /* at run time: the machine's NaN, not the compiler's constant */
  return zero / zero;
}

/* Math.min / Math.max on doubles (floats widen exactly): NaN wins, −0 < +0 */
static inline double js_min(double a, double b) {
  if (isnan(a) || isnan(b)) return default_nan;
  if (a < b) return a;
  if (b < a) return b;
  return signbit(a) ? a : b; /* equal: ±0 gives −0 if either is */
}
static inline double js_max(double a, double b) {
  if (isnan(a) || isnan(b)) return default_nan;
  if (a > b) return a;
  if (b > a) return b;
  return signbit(a) ? b : a; /* equal: ±0 gives +0 if either is */
}
/* + and ×, into's NaN first (a + a: that NaN quieted); else at most one NaN operand */
static inline double js_add(double a, double b) { return isnan(a) ? a + a : a + b; }
static inline double js_mul(double a, double b) { return isnan(a) ? a + a : a * b; }

KERNEL(sum_f64, double, js_add(a, b))
KERNEL(prod_f64, double, js_mul(a, b))
KERNEL(min_f64, double, js_min(a, b))
KERNEL(max_f64, double, js_max(a, b))
/* Float32: computed in double, rounded once to float (JavaScript's a[i] += b[i]) */
KERNEL(sum_f32, float, js_add((double)a, (double)b))
KERNEL(prod_f32, float, js_mul((double)a, (double)b))
KERNEL(min_f32, float, js_min((double)a, (double)b))
KERNEL(max_f32, float, js_max((double)a, (double)b))

#define ROW(SUF) {sum_##SUF, prod_##SUF, min_##SUF, max_##SUF, band_##SUF, bor_##SUF, bxor_##SUF}

/* [type][op], codes as VCOLL_COMBINE_* (vcoll_mpi_internal.h); NULL: not defined */
static const vcoll_combine_fn table[VCOLL_COMBINE_TYPES][VCOLL_COMBINE_OPS] = {
    ROW(i8),
    ROW(u8),
    {sum_u8c, prod_u8c, min_u8, max_u8, band_u8, bor_u8, bxor_u8},
    ROW(i16),
    ROW(u16),
    ROW(i32),
    ROW(u32),
    {sum_f32, prod_f32, min_f32, max_f32, NULL, NULL, NULL},
    {sum_f64, prod_f64, min_f64, max_f64, NULL, NULL, NULL},
    ROW(i64),
    ROW(u64),
};

static const size_t element_bytes[VCOLL_COMBINE_TYPES] = {1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8};

vcoll_combine_fn vcoll_combine_resolve(int op, int type, size_t *elbytes) {
  if (op < 0 || op >= VCOLL_COMBINE_OPS || type < 0 || type >= VCOLL_COMBINE_TYPES) return NULL;
  default_nan = make_default_nan();
  *elbytes = element_bytes[type];
  return table[type][op];
}
