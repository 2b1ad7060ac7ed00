/* The declarations ir/_exprs.c shares with ir/_cells.c and ir/_empty.c (one extension module): the store's node
   and store layouts, small helpers, and the functions the lexer's cells use. */

#ifndef GRAMMAR_DECODE_EXPRS_H
#define GRAMMAR_DECODE_EXPRS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NOTHING_KIND, EPSILON_KIND, BYTES_KIND, CONCAT_KIND, OR_KIND, AND_KIND, NOT_KIND, REPEAT_KIND, LITERAL_KIND };
enum { NOTHING = 0, EPSILON = 1, ANYTHING = 2 };
#define HAS_BOOLEAN 1
#define HAS_UNBOUNDED 2
#define MAX_BOUND ((int64_t)1 << 62)

/* One node. BYTES: the set is `first`. LITERAL: a = literal index, b = start. CONCAT, OR, AND:
   a = offset in the child pool, b = count. NOT: a = child. REPEAT: a = child, b = lo, c = hi
   (-1: unbounded). */
typedef struct {
    uint64_t first[4];
    int64_t a, b, c;
    uint64_t hash;
    uint8_t kind, nullable, flags;
} Node;

typedef struct {
    PyObject_HEAD
    Node *nodes;
    int32_t n, cap;
    int32_t *pool;
    int64_t npool, cappool;
    PyObject **lits; /* owned references to bytes objects */
    int32_t nlits, caplits;
    int32_t *index; /* open addressing: node id + 1, or 0 (empty); capacity a power of two */
    int64_t index_cap;
    int64_t *dkeys; /* derivative memo: node * 256 + byte + 1, or 0 (empty) */
    int32_t *dvals;
    int64_t dcap, dcount;
    /* the tables before their last growth, while their entries move over a few at a time (see
       "Tables that grow without a pause" in _exprs.c); NULL once all have moved */
    int32_t *old_index;
    int64_t old_index_cap, old_index_pos;
    int64_t *old_dkeys;
    int32_t *old_dvals;
    int64_t old_dcap, old_dpos;
    uint32_t *marks; /* per node: the walk (epoch) that last visited it, for step_pairs (class_of) */
    int32_t capmarks;
    uint32_t epoch;
    int64_t *bounds; /* per node: a lower bound of its lengths (lower_bound), -1: none, -2: not known yet */
    int32_t capbounds;
    PyObject *decided; /* the Python set's memo of emptiness (ExprSet._empty: node -> bool), or NULL */
    int mutation; /* tests only: 1 keeps ε in a nullable union, 2 leaves a counter's bound as it is,
                     3 has step_pairs never report a derivative that may be empty,
                     4 has make_cell append every new state as matching nothing,
                     5 has a lookup miss the index's entries still to move after a growth,
                     6 has make_cell not narrow a guarded state's class to the guard's,
                     7 has an intersection's witness word go unchecked by its other members,
                     8 has the probe for a word take the first derivative it expands as one,
                     9 has the probe and the search for a word try each node's first byte class alone,
                     10 has make_start take every origin's expression as matching something */
} Store;

extern PyTypeObject StoreType;

static inline int is_zero(const uint64_t m[4]) { return !(m[0] | m[1] | m[2] | m[3]); }
static inline int has_byte(const uint64_t m[4], int byte) { return (int)((m[byte >> 6] >> (byte & 63)) & 1); }

/* A buffer of ids: on the stack while small, on the heap past that. */
typedef struct {
    int32_t *items;
    Py_ssize_t n, cap;
    int32_t small[32];
} Ids;

static inline void ids_init(Ids *b) { b->items = b->small; b->n = 0; b->cap = 32; }
static inline void ids_free(Ids *b) { if (b->items != b->small) free(b->items); }
static inline int ids_push(Ids *b, int32_t v) {
    if (b->n == b->cap) {
        Py_ssize_t cap = 2 * b->cap;
        int32_t *grown = malloc((size_t)cap * sizeof(int32_t));
        if (!grown) { PyErr_NoMemory(); return -1; }
        memcpy(grown, b->items, (size_t)b->n * sizeof(int32_t));
        if (b->items != b->small) free(b->items);
        b->items = grown;
        b->cap = cap;
    }
    b->items[b->n++] = v;
    return 0;
}

int32_t derive(Store *s, int32_t item, int byte);
int class_of(Store *s, const int32_t *items, Py_ssize_t count, int byte, uint64_t klass[4]);
int32_t node_arg(Store *s, PyObject *value);
PyObject *mask_to_int(const uint64_t mask[4]);
PyObject *step_live(Store *s, PyObject *pairs, int byte, uint64_t klass[4], Ids *unsure);
PyObject *store_make_cell(Store *s, PyObject *const *args, Py_ssize_t nargs);
PyObject *store_make_start(Store *s, PyObject *const *args, Py_ssize_t nargs);
/* _cells.c: 256 cells of a dense table's row, each less `bias`, as a tuple of ints the cyclic
   collector does not track (ints only: it can be in no cycle; tracked, each new row cost 256
   visits in the next young collection). Equal targets share one int object. */
PyObject *row_tuple(const int32_t *row, int32_t bias);
/* _exprs.c: whether `o` holds no object the cyclic collector tracks (ints, bytes, strings, None,
   bools, and tuples of those nested at most `depth` deep), the tuples untracked on the way. */
int untrack_tuples(PyObject *o, int depth);
/* _empty.c: 1 where a word of d is shown (or its structure shows it non-empty), 2 where d is shown
   empty (searched only), 0 where undecided, -1 with an exception set */
/* Node visits one witnessed() call may spend, some_word's included (a host name's rest: a few hundred). */
#define WITNESS_FUEL 4096
int surely_nonempty(Store *s, int32_t d);
int witnessed(Store *s, int32_t d, int *fuel);
int searched(Store *s, int32_t item);
/* Whether d is empty, by every means the store has: nullable or free of & and ¬ (non-empty),
   its structure (surely_nonempty), a word (witnessed), the bounded search (searched); 1, 2, 0 or
   -1 as above. step_live, make_start and decide() ask this. */
int emptiness_of(Store *s, int32_t d);
PyObject *store_use_decided(Store *s, PyObject *arg);
PyObject *store_decide(Store *s, PyObject *arg);
PyObject *store_witnessed(Store *s, PyObject *arg);

#endif
