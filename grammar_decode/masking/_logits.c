/* Masked logits in one pass, in C (masking/logits.py).

   mask_logits(logits, mask, out[, mutation]) -> int

   logits:   float32 or float64, W entries (C-contiguous).
   mask:     one byte per token (numpy bool), M entries: nonzero where the token is allowed.
   out:      the same dtype and length as logits; may be logits itself (each entry is read before
             it is written, at the same index).
   mutation: tests only: 1 lets the last allowed-but-masked entry through (a token past the mask
             stays as it was), 2 keeps NaN.

   out[i] = logits[i] where i < M, mask[i] and logits[i] is not NaN; -inf elsewhere (ids past the
   mask are padding columns, never allowed). Returns how many entries of out are above -inf. The
   numpy reference takes a full-width fill, a masked copy and a NaN scan (three passes and a
   temporary); this is one branch-free pass, without the GIL. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* Branch-free, so that the compiler vectorises it: the mask byte picks x or -inf; NaN (and -inf)
   fail x > -inf, and what is kept is counted on the way. Built twice on x86-64 (AVX2 and the
   baseline), the loader picking the one the CPU runs (GCC's target_clones): a build for the machine
   it runs on (-march=native) would die with SIGILL elsewhere. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

#define MASK_FUNCTION(NAME, T)                                                                          \
    CLONES static Py_ssize_t NAME(const T *in, const uint8_t *mask, T *res, Py_ssize_t both, Py_ssize_t width,  \
                                  int mutation) {                                                       \
        const T ninf = (T)-INFINITY;                                                                    \
        Py_ssize_t count = 0;                                                                           \
        if (mutation == 2) {                                                                            \
            for (Py_ssize_t i = 0; i < both; i++) res[i] = mask[i] ? in[i] : ninf;                      \
        } else {                                                                                        \
            for (Py_ssize_t i = 0; i < both; i++) {                                                     \
                T x = in[i];                                                                            \
                int keep = (mask[i] != 0) & (x > ninf);                                                 \
                res[i] = keep ? x : ninf;                                                               \
                count += keep;                                                                          \
            }                                                                                           \
        }                                                                                               \
        for (Py_ssize_t i = both; i < width; i++) res[i] = ninf;                                        \
        if (mutation == 1 && both < width) res[both] = in[both];                                        \
        if (mutation) {                                                                                 \
            count = 0;                                                                                  \
            for (Py_ssize_t i = 0; i < width; i++) count += res[i] > ninf;                              \
        }                                                                                               \
        return count;                                                                                   \
    }

MASK_FUNCTION(mask_float, float)
MASK_FUNCTION(mask_double, double)

/* A buffer's struct format less a native or little-endian byte order mark ("<f" from ctypes
   arrays, "f" from numpy); "B" for none. */
static const char *float_format(const char *format) {
    if (format == NULL) return "B";
    if (format[0] == '@' || format[0] == '=') return format + 1;
#if PY_LITTLE_ENDIAN
    if (format[0] == '<') return format + 1;
#endif
    return format;
}

static PyObject *mask_logits(PyObject *self, PyObject *args) {
    PyObject *o_in, *o_mask, *o_out;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OOO|i", &o_in, &o_mask, &o_out, &mutation)) return NULL;
    Py_buffer b_in, b_mask, b_out;
    int held_in = 0, held_mask = 0, held_out = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(o_in, &b_in, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
    held_in = 1;
    if (PyObject_GetBuffer(o_mask, &b_mask, PyBUF_C_CONTIGUOUS) < 0) goto done;
    held_mask = 1;
    if (PyObject_GetBuffer(o_out, &b_out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) goto done;
    held_out = 1;
    {
        const char *fmt = float_format(b_in.format), *ofmt = float_format(b_out.format);
        int is32 = strcmp(fmt, "f") == 0, is64 = strcmp(fmt, "d") == 0;
        if (!(is32 || is64) || strcmp(fmt, ofmt) != 0 || b_in.len != b_out.len || b_mask.itemsize != 1) {
            PyErr_SetString(PyExc_TypeError, "mask_logits: float32 or float64 logits and out of one dtype and "
                                             "length, and a mask of one byte per token");
            goto done;
        }
        const uint8_t *mask = (const uint8_t *)b_mask.buf;
        const Py_ssize_t width = b_in.len / b_in.itemsize;
        const Py_ssize_t both = width < b_mask.len ? width : b_mask.len;
        Py_ssize_t live = 0;
        Py_BEGIN_ALLOW_THREADS
        if (is32)
            live = mask_float((const float *)b_in.buf, mask, (float *)b_out.buf, both, width, mutation);
        else
            live = mask_double((const double *)b_in.buf, mask, (double *)b_out.buf, both, width, mutation);
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(live);
    }
done:
    if (held_in) PyBuffer_Release(&b_in);
    if (held_mask) PyBuffer_Release(&b_mask);
    if (held_out) PyBuffer_Release(&b_out);
    return result;
}

static PyMethodDef methods[] = {
    {"mask_logits", mask_logits, METH_VARARGS,
     "mask_logits(logits, mask, out[, mutation]) -> int\n"
     "out = logits where the mask allows and the logit is not NaN, -inf elsewhere; returns the entries above -inf."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_logits", "Masked logits in C (masking/logits.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__logits(void) { return PyModule_Create(&module); }
