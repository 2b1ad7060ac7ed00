/* A growable array of int32, shared by the engine's C files (_parse.c, _rewrite.c, _nesting.c). Errors set
   MemoryError and return -1. */
#ifndef GRAMMAR_DECODE_ENGINE_VEC_H
#define GRAMMAR_DECODE_ENGINE_VEC_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct { int32_t *data; Py_ssize_t len, cap; } Vec;

static inline int vec_reserve(Vec *v, Py_ssize_t more) {
    if (v->len + more <= v->cap) return 0;
    Py_ssize_t cap = v->cap ? v->cap : 16;
    while (cap < v->len + more) cap *= 2;
    int32_t *data = realloc(v->data, (size_t)cap * sizeof(int32_t));
    if (!data) { PyErr_NoMemory(); return -1; }
    v->data = data;
    v->cap = cap;
    return 0;
}

static inline int vec_push(Vec *v, int32_t x) {
    if (v->len == v->cap && vec_reserve(v, 1) < 0) return -1;
    v->data[v->len++] = x;
    return 0;
}

static inline void vec_free(Vec *v) { free(v->data); v->data = NULL; v->len = v->cap = 0; }

#endif
