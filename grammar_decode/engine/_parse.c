/* Parse states in C: the states, return points and sets of return points of engine/parser.py
   kept in flat tables of numbers instead of Python objects. The same algorithm, step for step
   (parser.py is the reference: its docstrings explain the parse; this file says how it is stored):

   - a return point ("cont") is (position, parents), parents a set id; cont 0 is ROOT;
   - a set of return points is a sorted array of cont ids, interned (set 0 is empty, set 1 {ROOT});
   - a state is its threads (position, set id) sorted by position, accepting, depth: interned;
   - an "expected" set (the lexemes a state's threads expect, the ignored ones added) is interned
     too, and keeps the lexer state that begins a lexeme there once Python has made it.

   Lifetime: every record is reference counted. A set holds its conts, a cont its parents, a state
   its sets and its expected set; a state is held by its Python handle (a ParseState object, at most
   one per state, made on demand) and by nothing else, so a state lives exactly as long as a
   matcher, a cache or a caller holds its handle. Return points form a DAG (a cont's parents exist
   before it), so counting frees everything: no cyclic collector, and the handles are not tracked by
   it (they hold no Python object but the store). Scan memos point at their targets weakly: an id
   and the generation of its slot.

   Threads: every entry point runs with the GIL held and calls no Python code while it changes the
   tables (a handle is made only once a scan's result is held), so the GIL is the lock.

   Store(symbols, lexeme_offsets, lexeme_items, other_offsets, other_items, ignored, lexemes,
         max_depth, lexeme_net, peak_rest, net_rest[, mutation])
       symbols: int32 per position (a lexeme >= 0, a rule ~r < 0, END = INT32_MAX);
       per rule r, its alternatives' first positions that begin with a lexeme are
       lexeme_items[lexeme_offsets[r]:lexeme_offsets[r + 1]], the others likewise (int32);
       ignored: the ignored lexemes, sorted int32; lexemes: how many lexemes;
       max_depth: the depth limit, or -1; lexeme_net (int64 per lexeme), peak_rest and net_rest
       (int64 per position): the nesting analysis (parser_tables.NestingTables), ignored without a
       limit. mutation (tests only): 1 keeps the first set of return points reaching a position
       instead of merging them all; 2 ignores the depth limit.
   Store.initial(firsts, nullable) -> ParseState | None
   Store.live_states() -> int
   Store.set_rest(rest) (int64 per position, >= 2**60 for none): the completion costs' table.
   Store.parse_cost(state) -> int | inf; Store.after_costs(state) -> {lexeme: int | inf}
   Store.set_origins(origin_of[, mutation]): per lexeme its lexer origin (int32), set once;
       mutation (tests only): 1 leaves the last origin out of every origins_key.
   ParseState.scan(lexemes: frozenset) -> ParseState | None; .accepting, .depth, .threads,
   .expected, .origins_key (the expected lexemes' origins as LexemeDFA.start_key's bytes),
   .lexer_start (settable). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define END_SYMBOL INT32_MAX
#define NONE (-1)
#define ROOT 0
#define EMPTY_SET 0
#define ROOT_SET 1
#define COST_INF ((int64_t)1 << 60)
/* Levels of return points a merge recurses through before it gives up with RecursionError (the
   reference's recursion stops near 1,000 Python frames; a C frame here is ~200 bytes, so this
   stays far inside a thread's stack) */
#define MAX_MERGE_DEPTH 5000

#include "_vec.h"

static inline uint32_t mix(uint32_t h, uint32_t x) {
    h ^= x + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h;
}

static uint32_t hash_items(uint32_t h, const int32_t *items, int32_t n) {
    for (int32_t i = 0; i < n; i++) h = mix(h, (uint32_t)items[i]);
    return h;
}

typedef struct { int32_t position, parents, refs, chain; uint32_t hash; int32_t need; int64_t cost; } Cont;
typedef struct { int32_t *items; int32_t one, count, refs, chain; uint32_t hash; int32_t most_need; } CSet;
typedef struct { int32_t lexset, target; uint32_t gen; } Memo;
typedef struct {
    int32_t *threads;  /* 2 * count: position, set */
    int32_t count, depth, refs, chain;
    uint32_t hash, gen;
    int32_t expected, lexer_start, memo_count, memo_cap;
    uint8_t accepting, live;
    Memo *memo;
    int64_t cost;
    PyObject *handle;  /* borrowed: the handle clears it as it goes */
} State;
typedef struct {
    int32_t *items; int32_t count, refs, chain; uint32_t hash; int32_t lexer_start;
    PyObject *frozen, *origins;  /* made on demand: the frozenset of items, the origins key (bytes) */
} Expect;
typedef struct { int32_t *items; int32_t count; uint8_t ignored; } LexSet;

/* A chained hash table of record ids (the chain runs through the records' `chain`). */
typedef struct { int32_t *buckets; uint32_t mask; int32_t count; } Table;

typedef struct {
    PyObject_HEAD
    int32_t *symbols; Py_ssize_t nsymbols;
    int32_t *lex_off, *lex_items, *other_off, *other_items; Py_ssize_t nrules;
    int32_t *ignored; int32_t nignored, nlexemes;
    int64_t max_depth;
    int64_t *lexeme_net, *peak_rest, *net_rest, *rest;
    int mutation;
    Cont *conts; int32_t nconts, cap_conts, free_conts; Table cont_table;
    CSet *sets; int32_t nsets, cap_sets, free_sets; Table set_table;
    State *states; int32_t nstates, cap_states, free_states, live; Table state_table;
    Expect *expects; int32_t nexpects, cap_expects, free_expects; Table expect_table;
    LexSet *lexsets; int32_t nlexsets, cap_lexsets;
    PyObject *lexset_ids;  /* dict: frozenset of lexemes -> lexset id */
    int32_t *origin_of; int origin_mutation;  /* per lexeme: its lexer origin (set_origins), or NULL */
    /* scratch of one scan */
    int32_t *pos_first, *pos_last;   /* per position: first and last part (indices into parts), NONE */
    Vec part_set, part_next, touched, work, temps, items, items2, release_stack;
    uint64_t *seen_keys; uint32_t *seen_stamp; uint32_t seen_mask, stamp; int32_t seen_count;
    Vec memo_keys;  /* a merge's memo: [hash, count, result, items...] records */
    Vec memo_index; /* open addressing over memo_keys offsets */
    Py_ssize_t memo_entries;
} Store;

typedef struct {
    PyObject_HEAD
    Store *store;
    int32_t id;
    PyObject *weakrefs;
} Handle;

static PyTypeObject StoreType, HandleType;

/* ---- tables ------------------------------------------------------------------------------- */

static int table_init(Table *t, uint32_t size) {
    t->buckets = malloc(size * sizeof(int32_t));
    if (!t->buckets) { PyErr_NoMemory(); return -1; }
    memset(t->buckets, 0xff, size * sizeof(int32_t));
    t->mask = size - 1;
    t->count = 0;
    return 0;
}

#define CHAIN_OF(kind) \
    static inline int32_t *chain_##kind(Store *S, int32_t id) { return &S->kind[id].chain; } \
    static inline uint32_t hash_##kind(Store *S, int32_t id) { return S->kind[id].hash; }
CHAIN_OF(conts)
CHAIN_OF(sets)
CHAIN_OF(states)
CHAIN_OF(expects)

typedef int32_t *(*ChainFn)(Store *, int32_t);
typedef uint32_t (*HashFn)(Store *, int32_t);

/* Insert id (its hash set); doubles the buckets when the table is fuller than one per bucket. */
static int table_insert(Store *S, Table *t, int32_t id, ChainFn chain, HashFn hash, int32_t slots,
                        int (*is_live)(Store *, int32_t)) {
    if ((uint32_t)t->count >= t->mask + 1) {
        uint32_t size = 2 * (t->mask + 1);
        int32_t *buckets = malloc(size * sizeof(int32_t));
        if (!buckets) { PyErr_NoMemory(); return -1; }
        memset(buckets, 0xff, size * sizeof(int32_t));
        for (int32_t i = 0; i < slots; i++) {
            if (i == id || !is_live(S, i)) continue;
            uint32_t b = hash(S, i) & (size - 1);
            *chain(S, i) = buckets[b];
            buckets[b] = i;
        }
        free(t->buckets);
        t->buckets = buckets;
        t->mask = size - 1;
    }
    uint32_t b = hash(S, id) & t->mask;
    *chain(S, id) = t->buckets[b];
    t->buckets[b] = id;
    t->count++;
    return 0;
}

static void table_remove(Store *S, Table *t, int32_t id, ChainFn chain, HashFn hash) {
    int32_t *at = &t->buckets[hash(S, id) & t->mask];
    while (*at != id) at = chain(S, *at);
    *at = *chain(S, id);
    t->count--;
}

static int cont_live(Store *S, int32_t i) { return S->conts[i].position != -2; }
static int set_live(Store *S, int32_t i) { return S->sets[i].count >= 0; }
static int state_live(Store *S, int32_t i) { return S->states[i].live; }
static int expect_live(Store *S, int32_t i) { return S->expects[i].count >= 0; }

/* A free slot of a record array (grown by doubling): from the free list, else appended. */
#define SLOT(kind, type, free_head, count, cap)                                                  \
    static int32_t slot_##kind(Store *S) {                                                       \
        if (S->free_head != NONE) {                                                              \
            int32_t id = S->free_head;                                                           \
            S->free_head = S->kind[id].chain;                                                    \
            return id;                                                                           \
        }                                                                                        \
        if (S->count == S->cap) {                                                                \
            int32_t cap = S->cap ? 2 * S->cap : 64;                                              \
            type *grown = realloc(S->kind, (size_t)cap * sizeof(type));                          \
            if (!grown) { PyErr_NoMemory(); return NONE; }                                       \
            S->kind = grown;                                                                     \
            S->cap = cap;                                                                        \
        }                                                                                        \
        memset(&S->kind[S->count], 0, sizeof(type));                                             \
        return S->count++;                                                                       \
    }
SLOT(conts, Cont, free_conts, nconts, cap_conts)
SLOT(sets, CSet, free_sets, nsets, cap_sets)
SLOT(states, State, free_states, nstates, cap_states)
SLOT(expects, Expect, free_expects, nexpects, cap_expects)

static inline const int32_t *set_items(const CSet *s) { return s->count <= 1 ? &s->one : s->items; }

/* ---- release ------------------------------------------------------------------------------ */

/* Drop one reference to a set (kind 0) or cont (kind 1); frees what nothing holds any more,
   iteratively (chains of return points are as long as the deepest stack). */
static void release(Store *S, int kind, int32_t id) {
    Vec *stack = &S->release_stack;
    stack->len = 0;
    int32_t top_kind = kind, top = id;
    for (;;) {
        if (top_kind == 0) {
            CSet *s = &S->sets[top];
            if (--s->refs == 0 && top > ROOT_SET) {
                table_remove(S, &S->set_table, top, chain_sets, hash_sets);
                const int32_t *items = set_items(s);
                /* a failed push leaks the rest of the cascade rather than corrupting anything */
                if (vec_reserve(stack, 2 * (Py_ssize_t)s->count) == 0)
                    for (int32_t i = 0; i < s->count; i++) {
                        stack->data[stack->len++] = 1;
                        stack->data[stack->len++] = items[i];
                    }
                if (s->count > 1) free(s->items);
                s->items = NULL;
                s->count = -1;
                s->chain = S->free_sets;
                S->free_sets = top;
            }
        } else {
            Cont *c = &S->conts[top];
            if (--c->refs == 0 && top != ROOT) {
                table_remove(S, &S->cont_table, top, chain_conts, hash_conts);
                int32_t parents = c->parents;
                c->position = -2;
                c->chain = S->free_conts;
                S->free_conts = top;
                if (vec_reserve(stack, 2) == 0) {
                    stack->data[stack->len++] = 0;
                    stack->data[stack->len++] = parents;
                }
            }
        }
        if (!stack->len) return;
        top = stack->data[--stack->len];
        top_kind = stack->data[--stack->len];
    }
}

static void release_expect(Store *S, int32_t id) {
    Expect *e = &S->expects[id];
    if (--e->refs) return;
    table_remove(S, &S->expect_table, id, chain_expects, hash_expects);
    free(e->items);
    e->items = NULL;
    e->count = -1;
    PyObject *frozen = e->frozen, *origins = e->origins;
    e->frozen = e->origins = NULL;
    e->chain = S->free_expects;
    S->free_expects = id;
    Py_XDECREF(frozen);  /* a frozenset of ints, bytes: their deallocation calls nothing of ours */
    Py_XDECREF(origins);
}

static void release_state(Store *S, int32_t id) {
    State *st = &S->states[id];
    if (--st->refs) return;
    table_remove(S, &S->state_table, id, chain_states, hash_states);
    int32_t count = st->count;
    int32_t *threads = st->threads;
    int32_t expected = st->expected;
    free(st->memo);
    st->memo = NULL;
    st->threads = NULL;
    st->live = 0;
    st->gen++;
    st->chain = S->free_states;
    S->free_states = id;
    S->live--;
    for (int32_t i = 0; i < count; i++) release(S, 0, threads[2 * i + 1]);
    free(threads);
    if (expected != NONE) release_expect(S, expected);
}

/* ---- interning ---------------------------------------------------------------------------- */

/* Holds a set for the rest of the scan (released by drop_temps). */
static inline int hold(Store *S, int32_t set) {
    S->sets[set].refs++;
    return vec_push(&S->temps, set);
}

static void drop_temps(Store *S) {
    for (Py_ssize_t i = S->temps.len - 1; i >= 0; i--) release(S, 0, S->temps.data[i]);
    S->temps.len = 0;
}

/* The cont (position, parents), interned; a new one holds its parents and has no holder yet (the
   caller puts it in a set at once). */
static int32_t cont_intern(Store *S, int32_t position, int32_t parents) {
    uint32_t h = mix(mix(0x1234567u, (uint32_t)position), (uint32_t)parents);
    for (int32_t i = S->cont_table.buckets[h & S->cont_table.mask]; i != NONE; i = S->conts[i].chain) {
        Cont *c = &S->conts[i];
        if (c->hash == h && c->position == position && c->parents == parents) return i;
    }
    int32_t id = slot_conts(S);
    if (id == NONE) return NONE;
    Cont *c = &S->conts[id];
    c->position = position;
    c->parents = parents;
    c->refs = 0;
    c->hash = h;
    c->need = -1;
    c->cost = -1;
    if (table_insert(S, &S->cont_table, id, chain_conts, hash_conts, S->nconts, cont_live) < 0) {
        c->position = -2;
        c->chain = S->free_conts;
        S->free_conts = id;
        return NONE;
    }
    S->sets[parents].refs++;
    return id;
}

/* The set of the sorted, distinct conts `items`, interned and held for the scan. `items` must not
   point into the store's records (they move when a table grows). */
static int32_t set_intern(Store *S, const int32_t *items, int32_t n) {
    uint32_t h = hash_items(0x51ed27u + (uint32_t)n, items, n);
    for (int32_t i = S->set_table.buckets[h & S->set_table.mask]; i != NONE; i = S->sets[i].chain) {
        CSet *s = &S->sets[i];
        if (s->hash == h && s->count == n && !memcmp(set_items(s), items, (size_t)n * sizeof(int32_t)))
            return hold(S, i) < 0 ? NONE : i;
    }
    int32_t id = slot_sets(S);
    if (id == NONE) return NONE;
    CSet *s = &S->sets[id];
    s->items = NULL;
    if (n > 1) {
        s->items = malloc((size_t)n * sizeof(int32_t));
        if (!s->items) {
            s->count = -1;
            s->chain = S->free_sets;
            S->free_sets = id;
            PyErr_NoMemory();
            return NONE;
        }
        memcpy(s->items, items, (size_t)n * sizeof(int32_t));
    } else if (n == 1) {
        s->one = items[0];
    }
    s->count = n;
    s->refs = 0;
    s->hash = h;
    s->most_need = -1;
    if (table_insert(S, &S->set_table, id, chain_sets, hash_sets, S->nsets, set_live) < 0) {
        if (n > 1) free(s->items);
        s->count = -1;
        s->chain = S->free_sets;
        S->free_sets = id;
        return NONE;
    }
    for (int32_t i = 0; i < n; i++) S->conts[items[i]].refs++;
    return hold(S, id) < 0 ? NONE : id;
}

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts and dedupes v->data[from:] in place. */
static void sort_unique(Vec *v, Py_ssize_t from) {
    Py_ssize_t n = v->len - from;
    if (n <= 1) return;
    int32_t *a = v->data + from;
    qsort(a, (size_t)n, sizeof(int32_t), cmp_int32);
    Py_ssize_t out = 1;
    for (Py_ssize_t i = 1; i < n; i++)
        if (a[i] != a[out - 1]) a[out++] = a[i];
    v->len = from + out;
}

/* ---- merging return points ---------------------------------------------------------------- */

/* The merge's memo (parser.Parser._merge's): records [hash, count, result, items...] in
   memo_keys, found through an open-addressing index of their offsets (memo_index, -1 free). */
static int32_t memo_find(Store *S, uint32_t h, const int32_t *items, int32_t n) {
    if (!S->memo_index.len) return NONE;
    uint32_t mask = (uint32_t)S->memo_index.len - 1;
    for (uint32_t b = h & mask;; b = (b + 1) & mask) {
        int32_t at = S->memo_index.data[b];
        if (at < 0) return NONE;
        int32_t *rec = S->memo_keys.data + at;
        if ((uint32_t)rec[0] == h && rec[1] == n && !memcmp(rec + 3, items, (size_t)n * sizeof(int32_t)))
            return rec[2];
    }
}

static int memo_add(Store *S, uint32_t h, const int32_t *items, int32_t n, int32_t result) {
    Vec *index = &S->memo_index;
    if (!index->len) {
        if (vec_reserve(index, 64) < 0) return -1;
        index->len = 64;
        memset(index->data, 0xff, 64 * sizeof(int32_t));
    } else {
        if (2 * (S->memo_entries + 1) > index->len) {  /* rebuild twice as large */
            Py_ssize_t size = 2 * index->len;
            index->len = 0;
            if (vec_reserve(index, size) < 0) return -1;
            index->len = size;
            memset(index->data, 0xff, (size_t)size * sizeof(int32_t));
            for (Py_ssize_t at = 0; at < S->memo_keys.len; at += 3 + S->memo_keys.data[at + 1]) {
                uint32_t mask = (uint32_t)size - 1, b = (uint32_t)S->memo_keys.data[at] & mask;
                while (index->data[b] >= 0) b = (b + 1) & mask;
                index->data[b] = (int32_t)at;
            }
        }
    }
    Py_ssize_t at = S->memo_keys.len;
    if (vec_reserve(&S->memo_keys, 3 + n) < 0) return -1;
    int32_t *rec = S->memo_keys.data + at;
    rec[0] = (int32_t)h;
    rec[1] = n;
    rec[2] = result;
    memcpy(rec + 3, items, (size_t)n * sizeof(int32_t));
    S->memo_keys.len += 3 + n;
    uint32_t mask = (uint32_t)index->len - 1, b = h & mask;
    while (index->data[b] >= 0) b = (b + 1) & mask;
    index->data[b] = (int32_t)at;
    S->memo_entries++;
    return 0;
}

/* The canonical set of the conts items[0:n] (sorted, distinct; copied here before anything is
   made): one cont per position, the parents of those at one position merged in turn. */
static int32_t merge(Store *S, const int32_t *given, int32_t n, int depth) {
    if (depth > MAX_MERGE_DEPTH) {
        PyErr_SetString(PyExc_RecursionError, "return points nested too deeply to merge");
        return NONE;
    }
    uint32_t h = hash_items(0x3c6ef372u + (uint32_t)n, given, n);
    int32_t found = memo_find(S, h, given, n);
    if (found != NONE) return found;
    /* (position, cont) pairs sorted by position, in a buffer of our own */
    int64_t *pairs = malloc((size_t)(n ? n : 1) * (sizeof(int64_t) + sizeof(int32_t)));
    if (!pairs) { PyErr_NoMemory(); return NONE; }
    int32_t *key = (int32_t *)(pairs + n);
    memcpy(key, given, (size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++)
        pairs[i] = ((int64_t)S->conts[key[i]].position << 32) | (uint32_t)key[i];
    qsort(pairs, (size_t)n, sizeof(int64_t), cmp_int64);
    Vec out = {0};
    int32_t result = NONE;
    for (int32_t i = 0; i < n;) {
        int32_t position = (int32_t)(pairs[i] >> 32);
        int32_t j = i + 1;
        while (j < n && (int32_t)(pairs[j] >> 32) == position) j++;
        if (j - i == 1 || S->mutation == 1) {
            if (vec_push(&out, (int32_t)(uint32_t)pairs[i]) < 0) goto done;
        } else {
            Vec parents = {0};
            for (int32_t k = i; k < j; k++) {
                const CSet *p = &S->sets[S->conts[(int32_t)(uint32_t)pairs[k]].parents];
                if (vec_reserve(&parents, p->count) < 0) { free(parents.data); goto done; }
                memcpy(parents.data + parents.len, set_items(p), (size_t)p->count * sizeof(int32_t));
                parents.len += p->count;
            }
            sort_unique(&parents, 0);
            int32_t merged = merge(S, parents.data, (int32_t)parents.len, depth + 1);
            free(parents.data);
            if (merged == NONE) goto done;
            int32_t cont = cont_intern(S, position, merged);
            if (cont == NONE || vec_push(&out, cont) < 0) goto done;
        }
        i = j;
    }
    sort_unique(&out, 0);
    result = set_intern(S, out.data, (int32_t)out.len);
    if (result != NONE && memo_add(S, h, key, n, result) < 0) result = NONE;
done:
    free(out.data);
    free(pairs);
    return result;
}

/* ---- the depth limit ---------------------------------------------------------------------- */

static int64_t cont_need(Store *S, int32_t cont) {
    if (S->conts[cont].need >= 0) return S->conts[cont].need;  /* ROOT's is 0 */
    Vec *stack = &S->work;  /* free here: kept() runs once the expansions are done */
    stack->len = 0;
    if (vec_push(stack, cont) < 0) return -1;
    while (stack->len) {  /* an iterative post-order: stacks can be deep */
        int32_t top = stack->data[stack->len - 1];
        const CSet *p = &S->sets[S->conts[top].parents];
        int pending = 0;
        for (int32_t i = 0; i < p->count; i++) {
            int32_t q = set_items(p)[i];
            if (S->conts[q].need < 0) {
                if (vec_push(stack, q) < 0) return -1;
                pending = 1;
            }
        }
        if (pending) continue;
        stack->len--;
        if (S->conts[top].need >= 0) continue;
        int64_t below = INT64_MAX;
        for (int32_t i = 0; i < p->count; i++) {
            int64_t v = S->conts[set_items(p)[i]].need;
            if (v < below) below = v;
        }
        int32_t position = S->conts[top].position;
        int64_t need = S->net_rest[position] + below;
        if (S->peak_rest[position] > need) need = S->peak_rest[position];
        S->conts[top].need = need > INT32_MAX ? INT32_MAX : (int32_t)need;
    }
    return S->conts[cont].need;
}

/* The return points of a thread at `position` and `depth` some completion within the limit
   follows: the set itself, a subset, or EMPTY_SET (NONE on error). */
static int32_t kept(Store *S, int32_t position, int32_t set, int32_t depth) {
    int64_t room = S->max_depth - depth;
    if (S->peak_rest[position] > room) return EMPTY_SET;
    room -= S->net_rest[position];
    if (S->sets[set].most_need < 0) {
        int64_t most = 0;
        for (int32_t i = 0; i < S->sets[set].count; i++) {
            int64_t need = cont_need(S, set_items(&S->sets[set])[i]);
            if (need < 0) return NONE;
            if (need > most) most = need;
        }
        S->sets[set].most_need = most > INT32_MAX ? INT32_MAX : (int32_t)most;
    }
    if (S->sets[set].most_need <= room) return set;
    Py_ssize_t from = S->items2.len;
    for (int32_t i = 0; i < S->sets[set].count; i++) {
        int32_t c = set_items(&S->sets[set])[i];
        if (cont_need(S, c) <= room && vec_push(&S->items2, c) < 0) return NONE;
    }
    int32_t subset = set_intern(S, S->items2.data + from, (int32_t)(S->items2.len - from));
    S->items2.len = from;
    return subset;
}

/* ---- expanding and making states ---------------------------------------------------------- */

static void contribute(Store *S, int32_t position, int32_t set) {
    int32_t last = S->pos_last[position];
    if (last != NONE && S->part_set.data[last] == set) return;
    int32_t part = (int32_t)S->part_set.len;
    S->part_set.data[S->part_set.len++] = set;  /* room reserved by the caller */
    S->part_next.data[S->part_next.len++] = NONE;
    if (last == NONE) {
        S->pos_first[position] = part;
        S->touched.data[S->touched.len++] = position;
    } else {
        S->part_next.data[last] = part;
    }
    S->pos_last[position] = part;
}

static int reserve_parts(Store *S, Py_ssize_t more) {
    if (vec_reserve(&S->part_set, more) < 0 || vec_reserve(&S->part_next, more) < 0) return -1;
    return vec_reserve(&S->touched, more);
}

/* Marks (position, set) seen in this expansion; 1 if it was already. */
static int seen_add(Store *S, int32_t position, int32_t set) {
    if (2 * (uint32_t)(S->seen_count + 1) > S->seen_mask + 1) {
        uint32_t size = 2 * (S->seen_mask + 1);
        uint64_t *keys = malloc(size * sizeof(uint64_t));
        uint32_t *stamps = calloc(size, sizeof(uint32_t));
        if (!keys || !stamps) { free(keys); free(stamps); PyErr_NoMemory(); return -1; }
        for (uint32_t i = 0; i <= S->seen_mask; i++) {
            if (S->seen_stamp[i] != S->stamp) continue;
            uint64_t k = S->seen_keys[i];
            uint32_t b = (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (size - 1);
            while (stamps[b] == S->stamp) b = (b + 1) & (size - 1);
            keys[b] = k;
            stamps[b] = S->stamp;
        }
        free(S->seen_keys);
        free(S->seen_stamp);
        S->seen_keys = keys;
        S->seen_stamp = stamps;
        S->seen_mask = size - 1;
    }
    uint64_t k = ((uint64_t)(uint32_t)position << 32) | (uint32_t)set;
    uint32_t b = (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & S->seen_mask;
    while (S->seen_stamp[b] == S->stamp) {
        if (S->seen_keys[b] == k) return 1;
        b = (b + 1) & S->seen_mask;
    }
    S->seen_stamp[b] = S->stamp;
    S->seen_keys[b] = k;
    S->seen_count++;
    return 0;
}

static void seen_clear(Store *S) {
    S->seen_count = 0;
    if (++S->stamp == 0) {  /* wrapped: clear the stamps for real */
        memset(S->seen_stamp, 0, (S->seen_mask + 1) * sizeof(uint32_t));
        S->stamp = 1;
    }
}

/* parser.Parser._expand: the threads reached from (position, set) without reading a lexeme;
   1 when the end of the text is reached, 0 otherwise, -1 on error. */
static int expand(Store *S, int32_t position, int32_t set) {
    int accepted = 0;
    Vec *work = &S->work;
    work->len = 0;
    seen_clear(S);
    if (seen_add(S, position, set) < 0 || vec_push(work, position) < 0 || vec_push(work, set) < 0) return -1;
    while (work->len) {
        int32_t conts = work->data[--work->len];
        int32_t at = work->data[--work->len];
        int32_t symbol = S->symbols[at];
        if (symbol == END_SYMBOL) {
            int32_t count = S->sets[conts].count;
            for (int32_t i = 0; i < count; i++) {
                int32_t c = set_items(&S->sets[conts])[i];
                if (c == ROOT) { accepted = 1; continue; }
                int32_t p = S->conts[c].position, q = S->conts[c].parents;
                int was = seen_add(S, p, q);
                if (was < 0) return -1;
                if (!was && (vec_push(work, p) < 0 || vec_push(work, q) < 0)) return -1;
            }
        } else if (symbol >= 0) {
            if (reserve_parts(S, 1) < 0) return -1;
            contribute(S, at, conts);
        } else {
            int32_t rule = ~symbol, after = at + 1, inner = conts;
            if (S->symbols[after] != END_SYMBOL) {
                int32_t c = cont_intern(S, after, conts);
                if (c == NONE) return -1;
                inner = set_intern(S, &c, 1);
                if (inner == NONE) return -1;
            }
            int32_t from = S->lex_off[rule], to = S->lex_off[rule + 1];
            if (reserve_parts(S, to - from) < 0) return -1;
            for (int32_t k = from; k < to; k++) contribute(S, S->lex_items[k], inner);
            for (int32_t k = S->other_off[rule]; k < S->other_off[rule + 1]; k++) {
                int32_t first = S->other_items[k];
                int was = seen_add(S, first, inner);
                if (was < 0) return -1;
                if (!was && (vec_push(work, first) < 0 || vec_push(work, inner) < 0)) return -1;
            }
        }
    }
    return accepted;
}

/* The expected set of threads (symbols at their positions, the ignored lexemes added), interned
   and held by the caller (its refs counted up). */
static int32_t expect_intern(Store *S, const int32_t *threads, int32_t count) {
    Vec *items = &S->items;
    items->len = 0;
    if (vec_reserve(items, count + S->nignored) < 0) return NONE;
    for (int32_t i = 0; i < count; i++) items->data[items->len++] = S->symbols[threads[2 * i]];
    for (int32_t i = 0; i < S->nignored; i++) items->data[items->len++] = S->ignored[i];
    sort_unique(items, 0);
    int32_t n = (int32_t)items->len;
    uint32_t h = hash_items(0x2545f491u + (uint32_t)n, items->data, n);
    for (int32_t i = S->expect_table.buckets[h & S->expect_table.mask]; i != NONE; i = S->expects[i].chain) {
        Expect *e = &S->expects[i];
        if (e->hash == h && e->count == n && !memcmp(e->items, items->data, (size_t)n * sizeof(int32_t))) {
            e->refs++;
            return i;
        }
    }
    int32_t id = slot_expects(S);
    if (id == NONE) return NONE;
    Expect *e = &S->expects[id];
    e->items = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!e->items) {
        e->count = -1;
        e->chain = S->free_expects;
        S->free_expects = id;
        PyErr_NoMemory();
        return NONE;
    }
    memcpy(e->items, items->data, (size_t)n * sizeof(int32_t));
    e->count = n;
    e->refs = 1;
    e->hash = h;
    e->lexer_start = NONE;
    e->frozen = e->origins = NULL;
    if (table_insert(S, &S->expect_table, id, chain_expects, hash_expects, S->nexpects, expect_live) < 0) {
        free(e->items);
        e->count = -1;
        e->chain = S->free_expects;
        S->free_expects = id;
        return NONE;
    }
    return id;
}

/* Forgets the threads gathered and drops the sets held during a scan. */
static void clear_scratch(Store *S) {
    for (Py_ssize_t t = 0; t < S->touched.len; t++) {
        S->pos_first[S->touched.data[t]] = NONE;
        S->pos_last[S->touched.data[t]] = NONE;
    }
    S->touched.len = 0;
    S->part_set.len = 0;
    S->part_next.len = 0;
    drop_temps(S);
}

/* parser.Parser._state: the interned state of the gathered threads (scratch cleared), or NONE
   with *none set where there is none; NONE without *none on error. The state found or made is
   held by one reference, which the caller hands to a handle or drops. */
static int32_t make_state(Store *S, int accepting, int32_t depth, int *none) {
    *none = 0;
    int32_t result = NONE;
    Py_ssize_t ntouched = S->touched.len;
    int32_t *threads = malloc((size_t)(2 * ntouched + 1) * sizeof(int32_t));
    if (!threads) { PyErr_NoMemory(); goto clear; }
    qsort(S->touched.data, (size_t)ntouched, sizeof(int32_t), cmp_int32);
    int32_t count = 0;
    for (Py_ssize_t t = 0; t < ntouched; t++) {
        int32_t position = S->touched.data[t];
        int32_t part = S->pos_first[position];
        int32_t conts = S->part_set.data[part];
        int differ = 0;
        for (int32_t p = S->part_next.data[part]; p != NONE; p = S->part_next.data[p])
            if (S->part_set.data[p] != conts) differ = 1;
        if (differ && S->mutation != 1) {
            Vec *items = &S->items;
            items->len = 0;
            for (int32_t p = part; p != NONE; p = S->part_next.data[p]) {
                const CSet *s = &S->sets[S->part_set.data[p]];
                if (vec_reserve(items, s->count) < 0) goto fail;
                memcpy(items->data + items->len, set_items(s), (size_t)s->count * sizeof(int32_t));
                items->len += s->count;
            }
            sort_unique(items, 0);
            /* merge copies its input before making anything, but `items` is reused inside: copy */
            int32_t *copy = malloc((size_t)(items->len ? items->len : 1) * sizeof(int32_t));
            if (!copy) { PyErr_NoMemory(); goto fail; }
            memcpy(copy, items->data, (size_t)items->len * sizeof(int32_t));
            S->memo_keys.len = 0;
            S->memo_entries = 0;
            if (S->memo_index.len) memset(S->memo_index.data, 0xff, (size_t)S->memo_index.len * sizeof(int32_t));
            conts = merge(S, copy, (int32_t)items->len, 0);
            free(copy);
            if (conts == NONE) goto fail;
        }
        if (S->max_depth >= 0 && S->mutation != 2) {
            conts = kept(S, position, conts, depth);
            if (conts == NONE) goto fail;
            if (S->sets[conts].count == 0) continue;
        }
        threads[2 * count] = position;
        threads[2 * count + 1] = conts;
        count++;
    }
    if (!count && !accepting) {
        *none = 1;
        free(threads);
        goto clear;
    }
    uint32_t h = hash_items(mix(0x7f4a7c15u, (uint32_t)(2 * depth + accepting)), threads, 2 * count);
    for (int32_t i = S->state_table.buckets[h & S->state_table.mask]; i != NONE; i = S->states[i].chain) {
        State *st = &S->states[i];
        if (st->hash == h && st->count == count && st->depth == depth && st->accepting == accepting &&
            !memcmp(st->threads, threads, (size_t)(2 * count) * sizeof(int32_t))) {
            st->refs++;
            free(threads);
            result = i;
            goto clear;
        }
    }
    int32_t expected = expect_intern(S, threads, count);
    if (expected == NONE) goto fail;
    int32_t id = slot_states(S);
    if (id == NONE) { release_expect(S, expected); goto fail; }
    State *st = &S->states[id];
    uint32_t gen = st->gen;  /* 0 in a new slot, counted up each time a slot is freed */
    memset(st, 0, sizeof(State));
    st->gen = gen;
    st->threads = threads;
    st->count = count;
    st->depth = depth;
    st->accepting = (uint8_t)accepting;
    st->hash = h;
    st->expected = expected;
    st->lexer_start = S->expects[expected].lexer_start;
    st->cost = -1;
    st->live = 1;
    st->refs = 1;
    if (table_insert(S, &S->state_table, id, chain_states, hash_states, S->nstates, state_live) < 0) {
        st->live = 0;
        st->threads = NULL;
        st->chain = S->free_states;
        S->free_states = id;
        release_expect(S, expected);
        goto fail;
    }
    S->live++;
    for (int32_t i = 0; i < count; i++) S->sets[threads[2 * i + 1]].refs++;
    result = id;
    goto clear;
fail:
    free(threads);
clear:
    clear_scratch(S);
    return result;
}

/* ---- handles ------------------------------------------------------------------------------ */

/* The handle of a state that holds one reference for the caller (the reference goes to the
   handle, or is dropped where the state has one already). */
static PyObject *handle_of(Store *S, int32_t id) {
    State *st = &S->states[id];
    if (st->handle) {
        Py_INCREF(st->handle);
        release_state(S, id);
        return st->handle;
    }
    Handle *h = PyObject_New(Handle, &HandleType);  /* not tracked by the collector: no collection here */
    if (!h) {
        release_state(S, id);
        return NULL;
    }
    Py_INCREF(S);
    h->store = S;
    h->id = id;
    h->weakrefs = NULL;
    S->states[id].handle = (PyObject *)h;
    return (PyObject *)h;
}

static void Handle_dealloc(Handle *self) {
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    Store *S = self->store;
    S->states[self->id].handle = NULL;
    release_state(S, self->id);
    PyObject_Del(self);
    Py_DECREF(S);
}

static int32_t lexset_of(Store *S, PyObject *lexemes) {
    PyObject *known = PyDict_GetItemWithError(S->lexset_ids, lexemes);
    if (known) return (int32_t)PyLong_AsLong(known);
    if (PyErr_Occurred()) return NONE;
    if (!PyFrozenSet_Check(lexemes)) {
        PyErr_SetString(PyExc_TypeError, "scan takes a frozenset of lexemes");
        return NONE;
    }
    Py_ssize_t n = PySet_GET_SIZE(lexemes);
    if (S->nlexsets == S->cap_lexsets) {
        int32_t cap = S->cap_lexsets ? 2 * S->cap_lexsets : 16;
        LexSet *grown = realloc(S->lexsets, (size_t)cap * sizeof(LexSet));
        if (!grown) { PyErr_NoMemory(); return NONE; }
        S->lexsets = grown;
        S->cap_lexsets = cap;
    }
    int32_t *items = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!items) { PyErr_NoMemory(); return NONE; }
    Py_ssize_t pos = 0, i = 0;
    PyObject *key;
    Py_hash_t hash;
    while (_PySet_NextEntry(lexemes, &pos, &key, &hash)) {
        long v = PyLong_AsLong(key);
        if (v == -1 && PyErr_Occurred()) { free(items); return NONE; }
        items[i++] = v < 0 || v >= S->nlexemes ? -1 : (int32_t)v;  /* no thread expects another */
    }
    qsort(items, (size_t)n, sizeof(int32_t), cmp_int32);
    uint8_t ignored = 0;
    for (Py_ssize_t a = 0; a < n; a++)
        for (int32_t b = 0; b < S->nignored; b++)
            if (items[a] == S->ignored[b]) ignored = 1;
    PyObject *number = PyLong_FromLong(S->nlexsets);
    if (!number || PyDict_SetItem(S->lexset_ids, lexemes, number) < 0) {
        Py_XDECREF(number);
        free(items);
        return NONE;
    }
    Py_DECREF(number);
    LexSet *l = &S->lexsets[S->nlexsets];
    l->items = items;
    l->count = (int32_t)n;
    l->ignored = ignored;
    return S->nlexsets++;
}

static inline int in_lexset(const LexSet *l, int32_t symbol) {
    int32_t lo = 0, hi = l->count;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (l->items[mid] < symbol) lo = mid + 1;
        else hi = mid;
    }
    return lo < l->count && l->items[lo] == symbol;
}

/* parser.Parser._scan; memoised on the state (weakly: the target's id and generation). */
static PyObject *Handle_scan(Handle *self, PyObject *lexemes) {
    Store *S = self->store;
    int32_t lexset = lexset_of(S, lexemes);
    if (lexset == NONE) return NULL;
    int32_t id = self->id;
    State *st = &S->states[id];
    for (int32_t i = 0; i < st->memo_count; i++) {
        Memo *m = &st->memo[i];
        if (m->lexset != lexset) continue;
        if (m->target == NONE) Py_RETURN_NONE;
        State *t = &S->states[m->target];
        if (t->live && t->gen == m->gen) {
            t->refs++;
            return handle_of(S, m->target);
        }
        break;
    }
    const LexSet *l = &S->lexsets[lexset];
    int accepting = 0;
    int32_t depth = st->depth;
    int32_t count = st->count;
    for (int32_t i = 0; i < count; i++) {
        int32_t position = S->states[id].threads[2 * i];
        int32_t symbol = S->symbols[position];
        if (symbol < 0 || !in_lexset(l, symbol)) continue;
        int got = expand(S, position + 1, S->states[id].threads[2 * i + 1]);
        if (got < 0) goto fail;
        accepting |= got;
        if (S->max_depth >= 0) depth = S->states[id].depth + (int32_t)S->lexeme_net[symbol];
    }
    if (l->ignored) {
        if (reserve_parts(S, count) < 0) goto fail;
        for (int32_t i = 0; i < count; i++)
            contribute(S, S->states[id].threads[2 * i], S->states[id].threads[2 * i + 1]);
        accepting |= S->states[id].accepting;
    }
    int none;
    int32_t found = make_state(S, accepting, depth, &none);
    if (found == NONE && !none) return NULL;
    st = &S->states[id];
    Memo *slot = NULL;
    for (int32_t i = 0; i < st->memo_count; i++)
        if (st->memo[i].lexset == lexset) slot = &st->memo[i];
    if (!slot) {
        if (st->memo_count == st->memo_cap) {
            int32_t cap = st->memo_cap ? 2 * st->memo_cap : 2;
            Memo *grown = realloc(st->memo, (size_t)cap * sizeof(Memo));
            if (grown) {
                st->memo = grown;
                st->memo_cap = cap;
            }
        }
        if (st->memo_count < st->memo_cap) slot = &st->memo[st->memo_count++];
    }
    if (slot) {
        slot->lexset = lexset;
        slot->target = found;
        slot->gen = found == NONE ? 0 : S->states[found].gen;
    }
    if (found == NONE) Py_RETURN_NONE;
    return handle_of(S, found);
fail:
    clear_scratch(S);
    return NULL;
}

static PyObject *Handle_get_accepting(Handle *self, void *closure) {
    return PyBool_FromLong(self->store->states[self->id].accepting);
}

static PyObject *Handle_get_depth(Handle *self, void *closure) {
    return PyLong_FromLong(self->store->states[self->id].depth);
}

static PyObject *Handle_get_threads(Handle *self, void *closure) {
    const State *st = &self->store->states[self->id];
    PyObject *out = PyTuple_New(st->count);
    if (!out) return NULL;
    for (int32_t i = 0; i < st->count; i++) {
        PyObject *pair = Py_BuildValue("(ii)", st->threads[2 * i], st->threads[2 * i + 1]);
        if (!pair) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, pair);
    }
    return out;
}

static PyObject *Handle_get_expected(Handle *self, void *closure) {
    Store *S = self->store;
    int32_t e = S->states[self->id].expected;
    if (!S->expects[e].frozen) {
        PyObject *items = PyList_New(S->expects[e].count);
        if (!items) return NULL;
        for (int32_t i = 0; i < S->expects[e].count; i++) {
            PyObject *v = PyLong_FromLong(S->expects[e].items[i]);
            if (!v) { Py_DECREF(items); return NULL; }
            PyList_SET_ITEM(items, i, v);
        }
        PyObject *frozen = PyFrozenSet_New(items);
        Py_DECREF(items);
        if (!frozen) return NULL;
        e = S->states[self->id].expected;  /* the collector may have run: records may have moved */
        if (S->expects[e].frozen) Py_DECREF(frozen);
        else S->expects[e].frozen = frozen;
    }
    Py_INCREF(S->expects[e].frozen);
    return S->expects[e].frozen;
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The lexer origins of the expected lexemes as engine/dfa.py's _set_key writes a set of origins
   (sorted, each once, four bytes each in the machine's order): the key LexemeDFA.start_key looks
   the start state up by, made once per expected set. */
static PyObject *Handle_get_origins_key(Handle *self, void *closure) {
    Store *S = self->store;
    if (!S->origin_of) {
        PyErr_SetString(PyExc_RuntimeError, "origins_key needs Store.set_origins first");
        return NULL;
    }
    int32_t e = S->states[self->id].expected;
    if (!S->expects[e].origins) {
        int32_t n = S->expects[e].count;
        uint32_t *keys = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
        if (!keys) return PyErr_NoMemory();
        for (int32_t i = 0; i < n; i++) {
            int32_t lexeme = S->expects[e].items[i];
            if (lexeme < 0 || lexeme >= S->nlexemes) {
                free(keys);
                PyErr_SetString(PyExc_SystemError, "origins_key: an expected lexeme outside the store's");
                return NULL;
            }
            keys[i] = (uint32_t)S->origin_of[lexeme];
        }
        qsort(keys, (size_t)n, sizeof(uint32_t), compare_u32);
        int32_t kept = 0;
        for (int32_t i = 0; i < n; i++)
            if (!kept || keys[kept - 1] != keys[i]) keys[kept++] = keys[i];
        if (S->origin_mutation == 1 && kept) kept--;  /* tests only: the last origin left out */
        PyObject *key = PyBytes_FromStringAndSize((const char *)keys, (Py_ssize_t)kept * 4);
        free(keys);
        if (!key) return NULL;
        if (S->expects[e].origins) Py_DECREF(key);
        else S->expects[e].origins = key;
    }
    Py_INCREF(S->expects[e].origins);
    return S->expects[e].origins;
}

static PyObject *Handle_get_lexer_start(Handle *self, void *closure) {
    Store *S = self->store;
    State *st = &S->states[self->id];
    if (st->lexer_start == NONE) st->lexer_start = S->expects[st->expected].lexer_start;
    if (st->lexer_start == NONE) Py_RETURN_NONE;
    return PyLong_FromLong(st->lexer_start);
}

static int Handle_set_lexer_start(Handle *self, PyObject *value, void *closure) {
    if (!value || value == Py_None) {
        PyErr_SetString(PyExc_TypeError, "lexer_start is set to a lexer state");
        return -1;
    }
    long v = PyLong_AsLong(value);
    if (v == -1 && PyErr_Occurred()) return -1;
    Store *S = self->store;
    State *st = &S->states[self->id];
    st->lexer_start = (int32_t)v;
    S->expects[st->expected].lexer_start = (int32_t)v;
    return 0;
}

static PyObject *Handle_repr(Handle *self) {
    const State *st = &self->store->states[self->id];
    return PyUnicode_FromFormat("ParseState(%d threads, accepting=%s)", (int)st->count,
                                st->accepting ? "True" : "False");
}

static PyMethodDef Handle_methods[] = {
    {"scan", (PyCFunction)Handle_scan, METH_O,
     "The state after one lexeme that is any of the given frozenset, or None (memoised)."},
    {NULL}};

static PyGetSetDef Handle_getset[] = {
    {"accepting", (getter)Handle_get_accepting, NULL, "Whether the lexemes read form a sentence.", NULL},
    {"depth", (getter)Handle_get_depth, NULL, "Nesting depth of the text read (0 without a limit).", NULL},
    {"threads", (getter)Handle_get_threads, NULL, "(position, return-point set id) per thread.", NULL},
    {"expected", (getter)Handle_get_expected, NULL, "The lexemes that may come next (ignored ones included).",
     NULL},
    {"origins_key", (getter)Handle_get_origins_key, NULL,
     "The expected lexemes' lexer origins, sorted, as bytes (LexemeDFA.start_key's key; Store.set_origins first).",
     NULL},
    {"lexer_start", (getter)Handle_get_lexer_start, (setter)Handle_set_lexer_start,
     "The lexer state that begins the next lexeme, once set (shared by states expecting the same).", NULL},
    {NULL}};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "grammar_decode.engine._parse.ParseState",
    .tp_basicsize = sizeof(Handle),
    .tp_dealloc = (destructor)Handle_dealloc,
    .tp_repr = (reprfunc)Handle_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Every parse of the lexemes read so far, held in a compiled store. Compare by identity.",
    .tp_weaklistoffset = offsetof(Handle, weakrefs),
    .tp_methods = Handle_methods,
    .tp_getset = Handle_getset,
};

/* ---- the store ---------------------------------------------------------------------------- */

/* A copy of a contiguous buffer of `itemsize`-byte integers (numpy int32 or int64 arrays). */
static int copy_buffer(PyObject *obj, Py_ssize_t itemsize, void **out, Py_ssize_t *n) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view.itemsize != itemsize || !view.format || !strpbrk(view.format, itemsize == 4 ? "i" : "lq")) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_TypeError, "expected a contiguous array of %zd-byte integers", itemsize);
        return -1;
    }
    Py_ssize_t count = view.len / itemsize;
    *out = malloc((size_t)(count ? count : 1) * (size_t)itemsize);
    if (!*out) {
        PyBuffer_Release(&view);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(*out, view.buf, (size_t)view.len);
    if (n) *n = count;
    PyBuffer_Release(&view);
    return 0;
}

static void Store_dealloc(Store *S) {
    for (int32_t i = 0; i < S->nsets; i++)
        if (S->sets[i].count > 1) free(S->sets[i].items);
    for (int32_t i = 0; i < S->nstates; i++)
        if (S->states[i].live) { free(S->states[i].threads); free(S->states[i].memo); }
    for (int32_t i = 0; i < S->nexpects; i++)
        if (S->expects[i].count >= 0) {
            free(S->expects[i].items);
            Py_XDECREF(S->expects[i].frozen);
            Py_XDECREF(S->expects[i].origins);
        }
    for (int32_t i = 0; i < S->nlexsets; i++) free(S->lexsets[i].items);
    void *arrays[] = {S->symbols, S->lex_off, S->lex_items, S->other_off, S->other_items, S->ignored,
                      S->lexeme_net, S->peak_rest, S->net_rest, S->rest, S->conts, S->sets, S->states,
                      S->expects, S->lexsets, S->cont_table.buckets, S->set_table.buckets,
                      S->state_table.buckets, S->expect_table.buckets, S->pos_first, S->pos_last,
                      S->part_set.data, S->part_next.data, S->touched.data, S->work.data, S->temps.data,
                      S->items.data, S->items2.data, S->release_stack.data, S->seen_keys, S->seen_stamp,
                      S->memo_keys.data, S->memo_index.data, S->origin_of};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) free(arrays[i]);
    Py_XDECREF(S->lexset_ids);
    Py_TYPE(S)->tp_free((PyObject *)S);
}

static PyObject *Store_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *symbols, *lex_off, *lex_items, *other_off, *other_items, *ignored, *lexeme_net, *peak_rest, *net_rest;
    int nlexemes, mutation = 0;
    long long max_depth;
    if (!PyArg_ParseTuple(args, "OOOOOOiLOOO|i", &symbols, &lex_off, &lex_items, &other_off, &other_items, &ignored,
                          &nlexemes, &max_depth, &lexeme_net, &peak_rest, &net_rest, &mutation))
        return NULL;
    Store *S = (Store *)type->tp_alloc(type, 0);
    if (!S) return NULL;
    S->free_conts = S->free_sets = S->free_states = S->free_expects = NONE;
    Py_ssize_t n, nignored, nrules;
    if (copy_buffer(symbols, 4, (void **)&S->symbols, &S->nsymbols) < 0 ||
        copy_buffer(lex_off, 4, (void **)&S->lex_off, &nrules) < 0 ||
        copy_buffer(lex_items, 4, (void **)&S->lex_items, &n) < 0 ||
        copy_buffer(other_off, 4, (void **)&S->other_off, &n) < 0 ||
        copy_buffer(other_items, 4, (void **)&S->other_items, &n) < 0 ||
        copy_buffer(ignored, 4, (void **)&S->ignored, &nignored) < 0)
        goto fail;
    S->nrules = nrules - 1;
    S->nignored = (int32_t)nignored;
    S->nlexemes = nlexemes;
    S->max_depth = max_depth;
    S->mutation = mutation;
    if (max_depth >= 0) {
        Py_ssize_t m;
        if (copy_buffer(lexeme_net, 8, (void **)&S->lexeme_net, &m) < 0 ||
            copy_buffer(peak_rest, 8, (void **)&S->peak_rest, &m) < 0 ||
            copy_buffer(net_rest, 8, (void **)&S->net_rest, &m) < 0)
            goto fail;
    }
    S->pos_first = malloc((size_t)(S->nsymbols + 1) * sizeof(int32_t));
    S->pos_last = malloc((size_t)(S->nsymbols + 1) * sizeof(int32_t));
    S->seen_keys = malloc(64 * sizeof(uint64_t));
    S->seen_stamp = calloc(64, sizeof(uint32_t));
    S->lexset_ids = PyDict_New();
    if (!S->pos_first || !S->pos_last || !S->seen_keys || !S->seen_stamp || !S->lexset_ids) {
        PyErr_NoMemory();
        goto fail;
    }
    memset(S->pos_first, 0xff, (size_t)(S->nsymbols + 1) * sizeof(int32_t));
    memset(S->pos_last, 0xff, (size_t)(S->nsymbols + 1) * sizeof(int32_t));
    S->seen_mask = 63;
    S->stamp = 1;
    if (table_init(&S->cont_table, 256) < 0 || table_init(&S->set_table, 256) < 0 ||
        table_init(&S->state_table, 256) < 0 || table_init(&S->expect_table, 64) < 0)
        goto fail;
    /* ROOT, the empty set and {ROOT}: never freed (refs start at 1) */
    int32_t root = slot_conts(S), empty = slot_sets(S), roots = slot_sets(S);
    if (root != ROOT || empty != EMPTY_SET || roots != ROOT_SET) goto fail;
    S->conts[ROOT] = (Cont){.position = -1, .parents = EMPTY_SET, .refs = 1, .hash = 0, .need = 0, .cost = 0};
    S->sets[EMPTY_SET] = (CSet){.items = NULL, .count = 0, .refs = 1, .most_need = 0};
    S->sets[ROOT_SET] = (CSet){.items = NULL, .one = ROOT, .count = 1, .refs = 1, .most_need = 0};
    S->sets[EMPTY_SET].hash = hash_items(0x51ed27u, NULL, 0);
    S->sets[ROOT_SET].hash = hash_items(0x51ed27u + 1, &S->sets[ROOT_SET].one, 1);
    S->conts[ROOT].hash = mix(mix(0x1234567u, (uint32_t)-1), EMPTY_SET);
    if (table_insert(S, &S->cont_table, ROOT, chain_conts, hash_conts, S->nconts, cont_live) < 0 ||
        table_insert(S, &S->set_table, EMPTY_SET, chain_sets, hash_sets, S->nsets, set_live) < 0 ||
        table_insert(S, &S->set_table, ROOT_SET, chain_sets, hash_sets, S->nsets, set_live) < 0)
        goto fail;
    S->sets[EMPTY_SET].refs++;  /* ROOT's parents */
    return (PyObject *)S;
fail:
    Py_DECREF(S);
    return NULL;
}

static PyObject *Store_initial(Store *S, PyObject *args) {
    PyObject *firsts;
    int nullable;
    if (!PyArg_ParseTuple(args, "Op", &firsts, &nullable)) return NULL;
    int32_t *items;
    Py_ssize_t n;
    if (copy_buffer(firsts, 4, (void **)&items, &n) < 0) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (expand(S, items[i], ROOT_SET) < 0) {
            free(items);
            clear_scratch(S);
            return NULL;
        }
    }
    free(items);
    int none;
    int32_t found = make_state(S, nullable, 0, &none);
    if (found == NONE) {
        if (none) Py_RETURN_NONE;
        return NULL;
    }
    return handle_of(S, found);
}

static PyObject *Store_live_states(Store *S, PyObject *unused) { return PyLong_FromLong(S->live); }

/* Store.set_origins(origin_of[, mutation]): per lexeme its lexer origin (int32, >= 0), which
   ParseState.origins_key reads; set once, before any key is asked for. */
static PyObject *Store_set_origins(Store *S, PyObject *args) {
    PyObject *array;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "O|i", &array, &mutation)) return NULL;
    if (S->origin_of) {
        PyErr_SetString(PyExc_RuntimeError, "set_origins: the origins are set once");
        return NULL;
    }
    int32_t *values;
    Py_ssize_t n;
    if (copy_buffer(array, 4, (void **)&values, &n) < 0) return NULL;
    if (n != S->nlexemes) {
        free(values);
        PyErr_SetString(PyExc_ValueError, "set_origins: one origin per lexeme");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (values[i] < 0) {
            free(values);
            PyErr_SetString(PyExc_ValueError, "set_origins: an origin is >= 0");
            return NULL;
        }
    S->origin_of = values;
    S->origin_mutation = mutation;
    Py_RETURN_NONE;
}

static PyObject *Store_set_rest(Store *S, PyObject *rest) {
    int64_t *values;
    Py_ssize_t n;
    if (copy_buffer(rest, 8, (void **)&values, &n) < 0) return NULL;
    if (n != S->nsymbols) {
        free(values);
        PyErr_SetString(PyExc_ValueError, "one cost per position");
        return NULL;
    }
    free(S->rest);
    S->rest = values;
    for (int32_t i = 0; i < S->nconts; i++) S->conts[i].cost = i == ROOT ? 0 : -1;
    for (int32_t i = 0; i < S->nstates; i++) S->states[i].cost = -1;
    Py_RETURN_NONE;
}

static inline int64_t add_cost(int64_t a, int64_t b) { return a + b >= COST_INF ? COST_INF : a + b; }

static int64_t cont_cost(Store *S, int32_t cont) {
    if (S->conts[cont].cost >= 0) return S->conts[cont].cost;
    Vec *stack = &S->work;
    stack->len = 0;
    if (vec_push(stack, cont) < 0) return -1;
    while (stack->len) {
        int32_t top = stack->data[stack->len - 1];
        int pending = 0;
        int32_t parents = S->conts[top].parents;
        for (int32_t i = 0; i < S->sets[parents].count; i++) {
            int32_t q = set_items(&S->sets[parents])[i];
            if (S->conts[q].cost < 0) {
                if (vec_push(stack, q) < 0) return -1;
                pending = 1;
            }
        }
        if (pending) continue;
        stack->len--;
        if (S->conts[top].cost >= 0) continue;
        int64_t below = COST_INF;
        for (int32_t i = 0; i < S->sets[parents].count; i++) {
            int64_t v = S->conts[set_items(&S->sets[parents])[i]].cost;
            if (v < below) below = v;
        }
        S->conts[top].cost = add_cost(S->rest[S->conts[top].position], below);
    }
    return S->conts[cont].cost;
}

static int64_t set_cost(Store *S, int32_t set) {
    int64_t best = COST_INF;
    for (int32_t i = 0; i < S->sets[set].count; i++) {
        int64_t v = cont_cost(S, set_items(&S->sets[set])[i]);
        if (v < 0) return -1;
        if (v < best) best = v;
    }
    return best;
}

static PyObject *cost_object(int64_t v) {
    return v >= COST_INF ? PyFloat_FromDouble(Py_HUGE_VAL) : PyLong_FromLongLong(v);
}

static int check_handle(Store *S, PyObject *obj) {
    if (!PyObject_TypeCheck(obj, &HandleType) || ((Handle *)obj)->store != S) {
        PyErr_SetString(PyExc_TypeError, "a parse state of this store");
        return -1;
    }
    if (!S->rest) {
        PyErr_SetString(PyExc_RuntimeError, "set_rest first");
        return -1;
    }
    return 0;
}

static PyObject *Store_parse_cost(Store *S, PyObject *obj) {
    if (check_handle(S, obj) < 0) return NULL;
    int32_t id = ((Handle *)obj)->id;
    if (S->states[id].cost < 0) {
        int64_t best = COST_INF;
        if (S->states[id].accepting) best = 0;
        else
            for (int32_t i = 0; i < S->states[id].count; i++) {
                int64_t below = set_cost(S, S->states[id].threads[2 * i + 1]);
                if (below < 0) return NULL;
                int64_t v = add_cost(S->rest[S->states[id].threads[2 * i]], below);
                if (v < best) best = v;
            }
        S->states[id].cost = best;
    }
    return cost_object(S->states[id].cost);
}

static PyObject *Store_after_costs(Store *S, PyObject *obj) {
    if (check_handle(S, obj) < 0) return NULL;
    int32_t id = ((Handle *)obj)->id;
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (int32_t i = 0; i < S->states[id].count; i++) {
        int32_t position = S->states[id].threads[2 * i];
        int64_t below = set_cost(S, S->states[id].threads[2 * i + 1]);
        if (below < 0) goto fail;
        int64_t cost = add_cost(S->rest[position + 1], below);
        if (cost >= COST_INF) continue;  /* as the reference: only lexemes after which the text completes */
        PyObject *key = PyLong_FromLong(S->symbols[position]);
        if (!key) goto fail;
        PyObject *old = PyDict_GetItemWithError(out, key);
        int keep = 0;
        if (old) {
            keep = PyLong_AsLongLong(old) <= cost;
        } else if (PyErr_Occurred()) {
            Py_DECREF(key);
            goto fail;
        }
        if (!keep) {
            PyObject *value = cost_object(cost);
            if (!value || PyDict_SetItem(out, key, value) < 0) {
                Py_XDECREF(value);
                Py_DECREF(key);
                goto fail;
            }
            Py_DECREF(value);
        }
        Py_DECREF(key);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *Store_held_bytes(Store *S, PyObject *unused) {
    size_t bytes = (size_t)S->cap_conts * sizeof(Cont) + (size_t)S->cap_sets * sizeof(CSet) +
                   (size_t)S->cap_states * sizeof(State) + (size_t)S->cap_expects * sizeof(Expect);
    for (int32_t i = 0; i < S->nsets; i++)
        if (S->sets[i].count > 1) bytes += (size_t)S->sets[i].count * sizeof(int32_t);
    for (int32_t i = 0; i < S->nstates; i++)
        if (S->states[i].live)
            bytes += (size_t)S->states[i].count * 2 * sizeof(int32_t) + (size_t)S->states[i].memo_cap * sizeof(Memo);
    return PyLong_FromSize_t(bytes);
}

/* For tests: a live set's conts, and a live cont's (position, parents). */
static PyObject *Store_set_items(Store *S, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (id < 0 || id >= S->nsets || S->sets[id].count < 0) {
        PyErr_SetString(PyExc_KeyError, "no such set");
        return NULL;
    }
    PyObject *out = PyTuple_New(S->sets[id].count);
    if (!out) return NULL;
    for (int32_t i = 0; i < S->sets[id].count; i++) {
        PyObject *v = PyLong_FromLong(set_items(&S->sets[id])[i]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *Store_cont(Store *S, PyObject *arg) {
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (id < 0 || id >= S->nconts || S->conts[id].position == -2) {
        PyErr_SetString(PyExc_KeyError, "no such return point");
        return NULL;
    }
    return Py_BuildValue("(ii)", S->conts[id].position, S->conts[id].parents);
}

static PyMethodDef Store_methods[] = {
    {"set_items", (PyCFunction)Store_set_items, METH_O, "A set's return points (tests)."},
    {"cont", (PyCFunction)Store_cont, METH_O, "A return point's (position, parents set) (tests)."},
    {"initial", (PyCFunction)Store_initial, METH_VARARGS, "The initial state (firsts of the start rule, nullable)."},
    {"live_states", (PyCFunction)Store_live_states, METH_NOARGS, "How many states are alive."},
    {"held_bytes", (PyCFunction)Store_held_bytes, METH_NOARGS, "Bytes the store's tables hold."},
    {"set_rest", (PyCFunction)Store_set_rest, METH_O, "The completion costs' table (int64 per position)."},
    {"set_origins", (PyCFunction)Store_set_origins, METH_VARARGS, "Per lexeme its lexer origin (int32), once."},
    {"parse_cost", (PyCFunction)Store_parse_cost, METH_O, "Fewest bytes completing the text from a state."},
    {"after_costs", (PyCFunction)Store_after_costs, METH_O, "Per expected lexeme: fewest bytes after it."},
    {NULL}};

static PyTypeObject StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "grammar_decode.engine._parse.Store",
    .tp_basicsize = sizeof(Store),
    .tp_dealloc = (destructor)Store_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The parse states of one grammar's parser tables (engine/parser_compiled.py).",
    .tp_methods = Store_methods,
    .tp_new = Store_new,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_parse", "Parse states in C (engine/parser.py's).", -1,
                                    NULL};

PyMODINIT_FUNC PyInit__parse(void) {
    if (PyType_Ready(&StoreType) < 0 || PyType_Ready(&HandleType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&StoreType);
    Py_INCREF(&HandleType);
    if (PyModule_AddObject(m, "Store", (PyObject *)&StoreType) < 0 ||
        PyModule_AddObject(m, "ParseState", (PyObject *)&HandleType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
