/* The trie walks of masking/walk.py over flat arrays, in C.

   lexeme_part(byte, depth, end, table, accepting, start, max_depth, lexer, cell, bits, node_token_start,
               node_token_ids, node_token, pure, rest_first[, loop, mutation]) -> (nodes, bounds, reached)

   The lexeme walk in one call: from lexer state `start`, the trie nodes whose bytes all stay
   inside the lexeme, the boundaries where it must end, and the lexer states those nodes lead to.

   byte, depth, end:  the vocabulary trie (vocab/trie.py) as uint8, int32, int32 buffers of n nodes.
   table:             the lexer's transitions, int32, 256 per state, each plus STORED (2): the next
                      state, DEAD (-1), or UNBUILT (-2, stored as 0: a fresh table is zero pages)
                      where the transition is not made yet (rows are made one byte
                      class at a time, engine/dfa.py).
   accepting:         uint8 per state (bit 0): a lexeme matches there.
   max_depth:         the trie's deepest node (the walk's stack holds max_depth + 1 states).
   lexer:             asked for a missing transition `cell` leaves: lexer.dense_cell(state, byte),
                      then lexer.dense() for (table, accepting) as they are now (a grown table is
                      taken instead). The walk goes on where it stopped.
   cell:              None, or a tuple (make_cell, core): a missing transition is first asked of
                      make_cell(core, state, byte) (Store.make_cell, ir/_cells.c: the lexer's
                      maker in C, called with no Python frame between).
   bits, node_token_start, node_token_ids, node_token: bits None, or a writable uint8 mask (bit
                      t % 8 of byte t / 8 for token t) where the tokens of the allowed nodes are
                      set, with the trie's token arrays (vocab/trie.py: node_token_start, int64,
                      one more than the nodes; node_token_ids, int64; node_token, int32 per node:
                      the token spelled at the node, -1 where none, -2 where several). The walk
                      then gathers each node's token without a branch and sets the bits after the
                      loop. Setting them inside the loop, a load and a store at a random place of
                      the mask per node behind a branch of unpredictable length (0 or 1 tokens),
                      cost 2.5x the walk itself on Llama-3's full trie (docs/compiled-core.md).
   pure, rest_first:  both None, or the walk leaves out what a slice (masking/slices.py) has
                      already decided: below each depth-1 node whose byte b has rest_first[b]
                      (uint8, 256 entries) set, it skips the subtree of every node with pure[node]
                      (uint8 per node: only plain tokens below) without stepping the lexer there.
   loop:              with pure (default -1: none), a lexer state from which every plain token is
                      allowed, however long (a split's target whose plain run reaches the
                      longest plain token: Masker.lexeme_part): a node whose ASCII byte leads
                      there and whose subtree holds only plain tokens is allowed with its whole
                      subtree, unwalked (each token there is the node's path, then whole plain
                      characters from loop on); the subtree's nodes are listed, or with bits its
                      tokens set.
   mutation:          tests only: 1 walks a rejected byte's subtree, 2 drops boundaries, 3 leaves out
                      the last token of each node from bits, 6 skips pure subtrees below every
                      depth-1 node, 7 takes a subtree whole from loop without looking at pure, 8
                      leaves the thread's marks of the states reached set, 9 leaves the states
                      reached unsorted.

   Returns the allowed nodes (int32, in trie order, as bytes; None with bits), the boundaries
   (int32 (node, lexer state before its byte), as bytes) and the states reached (int32, sorted,
   each once, as bytes). The walk releases the GIL while it walks (it touches no Python object
   there); its marks, stack and output room are the thread's (grown as needed, kept), and the
   marks it set are cleared when it returns, done or not.

   drop_scratch()

   Frees the calling thread's scratch of lexeme_part (tests: after a broken walk).

   set_token_bits(nodes, node_token_start, node_token_ids, bits[, mutation])

   nodes:             int32, the trie nodes a walk allowed.
   node_token_start:  int64, one more than the trie's nodes: the tokens spelled at node j are
                      node_token_ids[node_token_start[j] : node_token_start[j + 1]] (vocab/trie.py).
   node_token_ids:    int64 token ids.
   bits:              uint8 in/out: bit t % 8 of byte t / 8 is set for each such token t.
   mutation:          tests only: 3 leaves out the last token spelled at each node.

   The mask of a walk in one pass over its nodes, without the GIL (the Python reference gathers
   the ids with numpy, sets a bool mask and packs it: three passes over arrays as long as the
   walk and the vocabulary).

   boundary_part(byte, depth, end, table, accepting, pairs, max_depth, recognizer, lexer, parses, known, cell
                 [, mutation, first_slots, starts]) -> (nodes, reached, count)

   The boundary walk of masking/walk.py in one call: the subtrees below the boundaries a lexeme
   walk met, where the lexeme read so far ends, the parse scans it and the lexer restarts on what
   the parse expects next. Parse states are Python objects; here they are numbered by their place
   in `parses` (0: the parse the walk starts from) and each restart is answered once per walk.

   pairs:             int32, the boundaries: (trie node, lexer state before that node's byte), two
                      int32 each (the lexeme walk's (k, 2) array as it is).
   max_depth:         the trie's deepest node (the walk's stacks hold max_depth + 1 states).
   recognizer, lexer: asked for what the tables do not hold: recognizer.restart(lex, parse) for a
                      restart `known` leaves (returns (parse after or None, next lexer state)),
                      lexer.dense_cell(state, byte) for a missing cell `cell` leaves, then
                      lexer.dense() for the table as it is now. The walk goes on where it stopped.
   parses:            a list of the one parse to start from; each new parse after a restart is
                      appended (its number is its place).
   known:             None, or the lexer's dict of the lexemes each state matches (engine/lexer.py,
                      Lexer.accepting). With it, a restart is answered here, C to C, as
                      Recognizer.restart answers it: the parse's scan of the lexemes matched (its
                      `scan` method) and the `lexer_start` the parse after it holds. A state whose
                      matches the dict has not met yet, or a parse after whose lexer_start is not set
                      yet goes to recognizer.restart, unless `starts` has its start state.
   cell:              as walk_lexeme's.
   mutation:          tests only: 4 keeps the parse from before a boundary inside a token instead
                      of the one after its scan; 5 drops the subtrees of boundaries inside a token;
                      11 takes, for a restart answered in C, the lexer_start of the parse before
                      the scan.
   first_slots:       the slots its tables start with (a power of two, default 64): the restarts,
                      (lexer state, parse) -> (parse after the scan or -1, the lexer state that
                      begins the next lexeme or DEAD), 4 int32 a slot; the pairs (lexer state,
                      parse number) the allowed nodes lead to, 2 a slot. Each doubles when half
                      full.
   starts:            None, or the lexer DFA's start states by origins key (LexemeDFA._starts):
                      with `known`, a parse after a restart whose lexer_start is not set takes the
                      state of its `origins_key` from it, where it is there (and sets it).

   Returns the allowed nodes (int32, in walk order, as bytes), the table of pairs reached (int32
   per slot, -3 where free, as bytes) and how many pairs it holds. The walk releases the GIL
   between callbacks; its stacks and tables are its own (malloc'd, freed when done). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#define DEAD (-1)
#define UNBUILT (-2)
/* The table holds each transition plus STORED (engine/dfa.py), so that UNBUILT is 0 there. */
#define STORED 2

typedef struct {
    Py_buffer view;
    int held;
} held_buffer;

static int take(PyObject *obj, held_buffer *out, Py_ssize_t itemsize, int writable, const char *name) {
    out->held = 0;
    if (PyObject_GetBuffer(obj, &out->view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    out->held = 1;
    if (out->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes expected, got %zd", name, itemsize,
                     out->view.itemsize);
        return -1;
    }
    return 0;
}

static void release(held_buffer *b) {
    if (b->held) {
        PyBuffer_Release(&b->view);
        b->held = 0;
    }
}

/* The inputs every walk reads: the trie's byte, depth and end arrays (n nodes) and the lexer's
   table (256 int32 per state) and accepting bytes, as taken by take_trie_and_lexer. */
typedef struct {
    const uint8_t *byte_at;
    const int32_t *depth_at, *end_at, *table;
    const uint8_t *accepting;
    Py_ssize_t n, states, accepting_len;
} walk_inputs;

/* Takes those five buffers (in that order in `objs` and `out`) and views them in `w`; -1 with a
   Python error set where one is missing, of the wrong item size, or the trie's arrays differ in
   length. */
static int take_trie_and_lexer(PyObject *const objs[5], held_buffer *const out[5], walk_inputs *w) {
    static const Py_ssize_t sizes[5] = {1, 4, 4, 4, 1};
    static const char *const names[5] = {"byte", "depth", "end", "table", "accepting"};
    for (int k = 0; k < 5; k++)
        if (take(objs[k], out[k], sizes[k], 0, names[k])) return -1;
    w->byte_at = (const uint8_t *)out[0]->view.buf;
    w->depth_at = (const int32_t *)out[1]->view.buf;
    w->end_at = (const int32_t *)out[2]->view.buf;
    w->table = (const int32_t *)out[3]->view.buf;
    w->accepting = (const uint8_t *)out[4]->view.buf;
    w->n = out[0]->view.len;
    w->states = out[3]->view.len / (256 * 4);
    w->accepting_len = out[4]->view.len;
    if (out[1]->view.len != 4 * w->n || out[2]->view.len != 4 * w->n) {
        PyErr_SetString(PyExc_ValueError, "the trie's byte, depth and end arrays differ in length");
        return -1;
    }
    return 0;
}

/* Takes the lexer's table and accepting bytes a callback handed back, where they are not the ones
   held (a grown table): 0, or -1 with a Python error set. */
static int retake_lexer(walk_inputs *w, held_buffer *b_table, held_buffer *b_acc, PyObject *table, PyObject *acc) {
    if (table != b_table->view.obj) {
        release(b_table);
        if (take(table, b_table, 4, 0, "table")) return -1;
        w->table = (const int32_t *)b_table->view.buf;
        w->states = b_table->view.len / (256 * 4);
    }
    if (acc != b_acc->view.obj) {
        release(b_acc);
        if (take(acc, b_acc, 1, 0, "accepting")) return -1;
        w->accepting = (const uint8_t *)b_acc->view.buf;
        w->accepting_len = b_acc->view.len;
    }
    return 0;
}

/* A missing cell (state, byte) made by `cell`, a tuple (make_cell, core): the lexer's own maker
   in C (Store.make_cell, ir/_cells.c), called without a Python frame. 1 where the walk's table now
   holds the transition, 0 where the caller must call make instead (no `cell`; make_cell leaves
   the cell to Python: a derivative that may be empty, a state with guarded pairs, a new state at
   the limit; or the table held is not the lexer's current one), -1 with a Python error set. */
static int fast_cell_in(PyObject *cell, const int32_t *table, Py_ssize_t states, long state, int byte) {
    if (cell == Py_None || state < 0 || state >= states) return 0;
    PyObject *args[3] = {PyTuple_GET_ITEM(cell, 1), PyLong_FromLong(state), PyLong_FromLong(byte)};
    PyObject *made = args[1] && args[2] ? PyObject_Vectorcall(PyTuple_GET_ITEM(cell, 0), args, 3, NULL) : NULL;
    Py_XDECREF(args[1]);
    Py_XDECREF(args[2]);
    if (!made) return -1;
    int done = made != Py_None;
    Py_DECREF(made);
    return done && table[256 * (Py_ssize_t)state + byte] != 0;
}

static int fast_cell(PyObject *cell, const walk_inputs *w, long state, int byte) {
    return fast_cell_in(cell, w->table, w->states, state, byte);
}

/* The missing cell (state, byte) made where a walk stands: by `cell` where it can (fast_cell),
   else by lexer.dense_cell(state, byte), the lexer's table then taken again from lexer.dense()
   (a grown table replaces the one held). 0, or -1 with a Python error set. */
static int make_missing(PyObject *cell, PyObject *lexer, walk_inputs *w, held_buffer *b_table, held_buffer *b_acc,
                        long state, int byte, const char *name) {
    int fast = fast_cell(cell, w, state, byte);
    if (fast) return fast < 0 ? -1 : 0;
    PyObject *made = PyObject_CallMethod(lexer, "dense_cell", "li", state, byte);
    if (!made) return -1;
    Py_DECREF(made);
    PyObject *now = PyObject_CallMethod(lexer, "dense", NULL);
    if (!now) return -1;
    if (!PyTuple_Check(now) || PyTuple_GET_SIZE(now) != 2) {
        Py_DECREF(now);
        PyErr_Format(PyExc_TypeError, "%s: lexer.dense() returns (table, accepting)", name);
        return -1;
    }
    int failed = retake_lexer(w, b_table, b_acc, PyTuple_GET_ITEM(now, 0), PyTuple_GET_ITEM(now, 1));
    Py_DECREF(now);
    return failed ? -1 : 0;
}

static int valid_cell(PyObject *cell, const char *name) {
    if (cell == Py_None || (PyTuple_Check(cell) && PyTuple_GET_SIZE(cell) == 2 &&
                            PyCallable_Check(PyTuple_GET_ITEM(cell, 0))))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s: cell is (make_cell, core) or None", name);
    return -1;
}

/* The range [*from, *to) of ids holding the tokens spelled at trie node `node`
   (ids[start[node] : start[node + 1]]); 0, or 1 where it lies outside ids. mutation 3 (tests
   only) leaves the last one out. */
static inline int node_tokens(int64_t node, const int64_t *start, int64_t n_ids, int mutation, int64_t *from,
                              int64_t *to) {
    *from = start[node];
    *to = start[node + 1];
    if (*from < 0 || *to > n_ids || *from > *to) return 1;
    if (mutation == 3 && *to > *from) (*to)--;
    return 0;
}

/* Sets the bit of every token spelled at trie node `node`; 0, or 1 where an index is outside its
   table. */
static inline int set_node_tokens(int64_t node, const int64_t *start, const int64_t *ids, int64_t n_ids,
                                  uint8_t *bits, int64_t width, int mutation) {
    int64_t from, to;
    if (node_tokens(node, start, n_ids, mutation, &from, &to)) return 1;
    for (int64_t j = from; j < to; j++) {
        int64_t token = ids[j];
        if (token < 0 || token >= width) return 1;
        bits[token >> 3] |= (uint8_t)(1u << (token & 7));
    }
    return 0;
}

static int compare_states(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The n states in ascending order, in place: insertion sort for the few most walks reach. */
static void sort_states(int32_t *states, int64_t n) {
    if (n > 32) {
        qsort(states, (size_t)n, sizeof(int32_t), compare_states);
        return;
    }
    for (int64_t k = 1; k < n; k++) {
        int32_t v = states[k];
        int64_t j = k - 1;
        while (j >= 0 && states[j] > v) {
            states[j + 1] = states[j];
            j--;
        }
        states[j + 1] = v;
    }
}

/* Per thread: the scratch of lexeme_part, grown as needed and kept (freed when the thread ends):
   the marks of the states a walk reached (one byte per lexer state, all zero between walks: a
   walk clears the marks it set), the tokens it gathered, the nodes, boundaries and states it
   found, and its stack. Fresh arrays of the trie's size (3 MB for a 128k vocabulary) cost ~10 us
   each to map, and their pages fault as the walk first writes them. */
typedef struct { char *data; size_t cap; } grow_buf;
typedef struct { grow_buf seen, tokens, nodes, bounds, reached, stack; } walk_scratch;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_made = 0;

static void scratch_free(void *p) {
    walk_scratch *s = (walk_scratch *)p;
    if (!s) return;
    free(s->seen.data);
    free(s->tokens.data);
    free(s->nodes.data);
    free(s->bounds.data);
    free(s->reached.data);
    free(s->stack.data);
    free(s);
}

static void scratch_make_key(void) { scratch_key_made = pthread_key_create(&scratch_key, scratch_free) == 0; }

static walk_scratch *thread_scratch(void) {
    pthread_once(&scratch_once, scratch_make_key);
    if (!scratch_key_made) return NULL;
    walk_scratch *s = (walk_scratch *)pthread_getspecific(scratch_key);
    if (!s) {
        s = (walk_scratch *)calloc(1, sizeof(walk_scratch));
        if (s && pthread_setspecific(scratch_key, s) != 0) {
            free(s);
            s = NULL;
        }
    }
    return s;
}

/* At least `bytes` of `b` (its new part zeroed where `zeroed`), or NULL where memory ran out. */
static void *reserve(grow_buf *b, size_t bytes, int zeroed) {
    if (bytes <= b->cap) return b->data;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < bytes) cap *= 2;
    char *more = (char *)realloc(b->data, cap);
    if (!more) return NULL;
    if (zeroed) memset(more + b->cap, 0, cap - b->cap);
    b->data = more;
    b->cap = cap;
    return more;
}

/* lexeme_part: see the top of this file. */
static PyObject *lexeme_part(PyObject *self, PyObject *args) {
    PyObject *o_byte, *o_depth, *o_end, *o_table, *o_acc, *lexer, *o_cell, *o_bits, *o_tstart, *o_tids, *o_single,
        *o_pure, *o_rest;
    long start, max_depth, loop = -1;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OOOOOllOOOOOOOO|li", &o_byte, &o_depth, &o_end, &o_table, &o_acc, &start, &max_depth,
                          &lexer, &o_cell, &o_bits, &o_tstart, &o_tids, &o_single, &o_pure, &o_rest, &loop, &mutation))
        return NULL;
    if (loop != -1 && (o_pure == Py_None || loop < 0)) {
        PyErr_SetString(PyExc_ValueError, "lexeme_part: loop is a lexer state, given with pure and rest_first");
        return NULL;
    }
    if (valid_cell(o_cell, "lexeme_part")) return NULL;
    if ((o_pure == Py_None) != (o_rest == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "lexeme_part: pure and rest_first go together");
        return NULL;
    }
    if (max_depth < 0 || max_depth > (1 << 20)) {
        PyErr_SetString(PyExc_ValueError, "lexeme_part: max_depth out of range");
        return NULL;
    }
    walk_scratch *scratch = thread_scratch();
    if (!scratch) return PyErr_NoMemory();
    held_buffer b_byte, b_depth, b_end, b_table, b_acc, b_tstart, b_tids, b_bits, b_pure, b_rest, b_single;
    held_buffer *all[] = {&b_byte, &b_depth, &b_end, &b_table, &b_acc, &b_tstart, &b_tids, &b_bits, &b_pure, &b_rest,
                          &b_single};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) all[k]->held = 0;
    PyObject *result = NULL;
    int32_t *reached = NULL;
    uint8_t *seen = NULL;
    int64_t n_reached = 0;
    walk_inputs w;
    PyObject *const inputs[5] = {o_byte, o_depth, o_end, o_table, o_acc};
    held_buffer *const input_buffers[5] = {&b_byte, &b_depth, &b_end, &b_table, &b_acc};
    if (take_trie_and_lexer(inputs, input_buffers, &w)) goto done;
    const int with_bits = o_bits != Py_None;
    if (with_bits && (take(o_tstart, &b_tstart, 8, 0, "node_token_start") || take(o_tids, &b_tids, 8, 0, "node_token_ids") ||
                      take(o_bits, &b_bits, 1, 1, "bits") || take(o_single, &b_single, 4, 0, "node_token")))
        goto done;
    const int skipping = o_pure != Py_None;
    if (skipping && (take(o_pure, &b_pure, 1, 0, "pure") || take(o_rest, &b_rest, 1, 0, "rest_first")))
        goto done;
    if (skipping && (b_pure.view.len != w.n || b_rest.view.len != 256)) {
        PyErr_SetString(PyExc_ValueError, "lexeme_part: pure has one byte per trie node, rest_first 256");
        goto done;
    }
    if (with_bits && (b_single.view.len != 4 * w.n || b_tstart.view.len != 8 * (w.n + 1))) {
        PyErr_SetString(PyExc_ValueError, "lexeme_part: node_token is not one per node, or node_token_start one "
                                          "longer than the trie");
        goto done;
    }
    if (start < 0 || start >= w.states || start >= w.accepting_len) {
        PyErr_SetString(PyExc_ValueError, "lexeme_part: the start state is outside its table");
        goto done;
    }
    {
        const Py_ssize_t stack_len = max_depth + 1;
        const int64_t n_tids = with_bits ? (int64_t)(b_tids.view.len / 8) : 0;
        int32_t *stack = (int32_t *)reserve(&scratch->stack, (size_t)stack_len * 4, 0);
        int32_t *nodes = (int32_t *)reserve(with_bits ? &scratch->tokens : &scratch->nodes,
                                            (size_t)(with_bits ? n_tids + 1 : w.n) * 4, 0);
        int32_t *bounds = (int32_t *)reserve(&scratch->bounds, (size_t)w.n * 8, 0);
        reached = (int32_t *)reserve(&scratch->reached, (size_t)w.n * 4, 0);
        seen = (uint8_t *)reserve(&scratch->seen, (size_t)w.states, 1);
        Py_ssize_t seen_len = (Py_ssize_t)scratch->seen.cap;
        if (!stack || !nodes || !bounds || !reached || !seen) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t k = 0; k < stack_len; k++) stack[k] = (int32_t)start;
        const int64_t *tstart = with_bits ? (const int64_t *)b_tstart.view.buf : NULL;
        const int64_t *tids = with_bits ? (const int64_t *)b_tids.view.buf : NULL;
        uint8_t *bits = with_bits ? (uint8_t *)b_bits.view.buf : NULL;
        const int64_t width = with_bits ? (int64_t)b_bits.view.len * 8 : 0;
        const int32_t *single = with_bits ? (const int32_t *)b_single.view.buf : NULL;
        int32_t *tokens = nodes; /* with bits: the allowed tokens, set in bits after the loop */
        const int keep_single = mutation != 3;
        int64_t n_tokens = 0, n_nodes = 0, n_bounds = 0;
        Py_ssize_t i = 1;
        long missing = -1;
        int bad = 0;
        const uint8_t *pure = skipping ? (const uint8_t *)b_pure.view.buf : NULL;
        const uint8_t *rest_first = skipping ? (const uint8_t *)b_rest.view.buf : NULL;
        int rest = 0; /* inside the subtree of a depth-1 node whose byte has rest_first set */
    walk:
        missing = -1;
        /* every state the loop reads is checked where it enters the stack (each transition read) */
        Py_ssize_t limit = w.states < w.accepting_len ? w.states : w.accepting_len;
        if (seen_len < limit) limit = seen_len;
        Py_BEGIN_ALLOW_THREADS
        while (i < w.n) {
            int32_t d = w.depth_at[i];
            if (d < 1 || d >= stack_len) { bad = 1; break; }
            if (skipping) {
                if (d == 1) rest = rest_first[w.byte_at[i]] || mutation == 6;
                if (rest && pure[i]) {  /* only plain tokens below: the slice has them */
                    i = w.end_at[i];
                    continue;
                }
            }
            int32_t parent = stack[d - 1];
            int32_t nxt = w.table[(Py_ssize_t)parent * 256 + w.byte_at[i]] - STORED;
            if (nxt == UNBUILT) { missing = parent; break; }
            if ((uint64_t)((int64_t)nxt + 1) >= (uint64_t)limit + 1) { bad = 1; break; }  /* DEAD or a state */
            if (nxt == DEAD) {
                if ((w.accepting[parent] & 1) && mutation != 2) {
                    bounds[2 * n_bounds] = (int32_t)i;
                    bounds[2 * n_bounds + 1] = parent;
                    n_bounds++;
                }
                /* mutation 1 (tests only): step into the rejected subtree instead of skipping it */
                i = mutation == 1 ? i + 1 : w.end_at[i];
                continue;
            }
            stack[d] = nxt;
            if (!seen[nxt]) {
                seen[nxt] = 1;
                reached[n_reached++] = nxt;
            }
            if (nxt == loop && w.byte_at[i] < 0x80 && (pure[i] || mutation == 7)) {
                /* every token below is this path and then whole plain characters from loop on */
                Py_ssize_t stop = w.end_at[i];
                if (stop <= i || stop > w.n) { bad = 1; break; }
                if (with_bits) {
                    int64_t from = tstart[i], to = tstart[stop];
                    if (from < 0 || to > n_tids || from > to || n_tokens + (to - from) > n_tids) { bad = 1; break; }
                    for (int64_t j = from; j < to; j++) tokens[n_tokens++] = (int32_t)tids[j];
                } else {
                    for (Py_ssize_t k = i; k < stop; k++) nodes[n_nodes++] = (int32_t)k;
                }
                i = stop;
                continue;
            }
            if (with_bits) {
                int32_t t = single[i];
                tokens[n_tokens] = t;  /* always written, kept only where it is a token: no branch */
                n_tokens += (t >= 0) & keep_single;
                if (t < -1) { /* several tokens here (rare) */
                    int64_t from, to;
                    if (node_tokens(i, tstart, n_tids, mutation, &from, &to) || n_tokens + (to - from) > n_tids) {
                        bad = 1;
                        break;
                    }
                    for (int64_t j = from; j < to; j++) tokens[n_tokens++] = (int32_t)tids[j];
                }
            } else {
                nodes[n_nodes++] = (int32_t)i;
            }
            i++;
        }
        /* the tokens gathered so far into the mask (before any callback: the list starts anew) */
        for (int64_t k = 0; k < n_tokens && !bad; k++) {
            int64_t token = tokens[k];
            if (token < 0 || token >= width) { bad = 1; break; }
            bits[token >> 3] |= (uint8_t)(1u << (token & 7));
        }
        n_tokens = 0;
        Py_END_ALLOW_THREADS
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "lexeme_part: a trie depth, lexer state or token is outside its table");
            goto done;
        }
        if (missing >= 0) {  /* a missing cell, made where the walk stands */
            if (make_missing(o_cell, lexer, &w, &b_table, &b_acc, missing, (int)w.byte_at[i], "lexeme_part") < 0)
                goto done;
            /* a grown table: the marks grow with it (new states unmarked) */
            seen = (uint8_t *)reserve(&scratch->seen, (size_t)w.states, 1);
            if (!seen) {
                PyErr_NoMemory();
                goto done;
            }
            seen_len = (Py_ssize_t)scratch->seen.cap;
            goto walk;
        }
        if (mutation != 9) sort_states(reached, n_reached);  /* 9 (tests only): left in the order first reached */
        PyObject *o_nodes = with_bits ? (Py_INCREF(Py_None), Py_None)
                                      : PyBytes_FromStringAndSize((const char *)nodes, (Py_ssize_t)(n_nodes * 4));
        PyObject *o_bounds = PyBytes_FromStringAndSize((const char *)bounds, (Py_ssize_t)(n_bounds * 8));
        PyObject *o_reached = PyBytes_FromStringAndSize((const char *)reached, (Py_ssize_t)(n_reached * 4));
        if (o_nodes && o_bounds && o_reached) result = Py_BuildValue("(NNN)", o_nodes, o_bounds, o_reached);
        else {
            Py_XDECREF(o_nodes);
            Py_XDECREF(o_bounds);
            Py_XDECREF(o_reached);
        }
    }
done:
    /* the marks cleared for the thread's next walk, done or not (mutation 8, tests only: left set) */
    if (seen && reached && mutation != 8)
        for (int64_t k = 0; k < n_reached; k++) seen[reached[k]] = 0;
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) release(all[k]);
    return result;
}

/* Frees this thread's scratch of lexeme_part (tests: after a broken walk left marks set). */
static PyObject *drop_scratch(PyObject *self, PyObject *unused) {
    walk_scratch *s = thread_scratch();
    if (s) {
        pthread_setspecific(scratch_key, NULL);
        scratch_free(s);
    }
    Py_RETURN_NONE;
}

static PyObject *set_token_bits(PyObject *self, PyObject *args) {
    PyObject *o_nodes, *o_start, *o_ids, *o_bits;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OOOO|i", &o_nodes, &o_start, &o_ids, &o_bits, &mutation))
        return NULL;
    held_buffer b_nodes, b_start, b_ids, b_bits;
    held_buffer *all[] = {&b_nodes, &b_start, &b_ids, &b_bits};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) all[k]->held = 0;
    PyObject *result = NULL;
    if (take(o_nodes, &b_nodes, 4, 0, "nodes") || take(o_start, &b_start, 8, 0, "node_token_start") ||
        take(o_ids, &b_ids, 8, 0, "node_token_ids") || take(o_bits, &b_bits, 1, 1, "bits"))
        goto done;
    {
        const int32_t *nodes = (const int32_t *)b_nodes.view.buf;
        const int64_t *start = (const int64_t *)b_start.view.buf;
        const int64_t *ids = (const int64_t *)b_ids.view.buf;
        uint8_t *bits = (uint8_t *)b_bits.view.buf;
        const Py_ssize_t count = b_nodes.view.len / 4;
        const Py_ssize_t trie_nodes = b_start.view.len / 8 - 1;
        const int64_t n_ids = (int64_t)(b_ids.view.len / 8);
        const int64_t width = (int64_t)b_bits.view.len * 8;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < count && !bad; k++) {
            int32_t node = nodes[k];
            if (node < 0 || node >= trie_nodes) { bad = 1; break; }
            bad = set_node_tokens(node, start, ids, n_ids, bits, width, mutation);
        }
        Py_END_ALLOW_THREADS
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "set_token_bits: a node or token id is outside its table");
            goto done;
        }
        Py_INCREF(Py_None);
        result = Py_None;
    }
done:
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) release(all[k]);
    return result;
}


#define MEMO_EMPTY (-3)

static inline uint32_t pair_hash(int32_t a, int32_t b) {
    uint32_t h = (uint32_t)a * 0x9E3779B1u ^ ((uint32_t)b + 0x7F4A7C15u) * 0x85EBCA77u;
    return h ^ (h >> 15);
}

/* The slot of (a, b) in a table of `slots` (a power of two) entries of `width` int32, keyed by
   the first two; the empty slot where it would go when absent. -1 when the table is full. */
static inline int64_t find_slot(const int32_t *table, int64_t slots, int width, int32_t a, int32_t b) {
    uint32_t h = pair_hash(a, b);
    for (int64_t probe = 0; probe < slots; probe++) {
        int64_t slot = (int64_t)((h + (uint32_t)probe) & (uint32_t)(slots - 1));
        const int32_t *entry = table + slot * width;
        if (entry[0] == MEMO_EMPTY || (entry[0] == a && entry[1] == b)) return slot;
    }
    return -1;
}

/* The restart of (lexer state `lex`, parse number `number`) answered from `known` (see above):
   1 with *after (a parse number, -1: none) and *fresh set; 0 where Python must answer it; -1 with
   an exception. */
static int known_restart(PyObject *known, long lex, long number, int mutation, long *after, long *fresh) {
    static PyObject *scan_name = NULL, *start_name = NULL, *key_name = NULL;
    if (!scan_name && !(scan_name = PyUnicode_InternFromString("scan"))) return -1;
    if (!start_name && !(start_name = PyUnicode_InternFromString("lexer_start"))) return -1;
    if (!key_name && !(key_name = PyUnicode_InternFromString("origins_key"))) return -1;
    PyObject *accepting = PyTuple_GET_ITEM(known, 0), *parses = PyTuple_GET_ITEM(known, 1),
             *numbers = PyTuple_GET_ITEM(known, 2), *starts = PyTuple_GET_ITEM(known, 3);
    if (number < 0 || number >= PyList_GET_SIZE(parses)) {
        PyErr_SetString(PyExc_ValueError, "boundary_part: a parse number past the parses");
        return -1;
    }
    PyObject *key = PyLong_FromLong(lex);
    if (!key) return -1;
    PyObject *matched = PyDict_GetItemWithError(accepting, key);  /* borrowed */
    Py_DECREF(key);
    if (!matched) return PyErr_Occurred() ? -1 : 0;
    int some = PyObject_IsTrue(matched);
    if (some < 0) return -1;
    if (!some) {  /* no lexeme matches there: no restart */
        *after = -1;
        *fresh = DEAD;
        return 1;
    }
    PyObject *parse = PyList_GET_ITEM(parses, number);
    PyObject *scanned = PyObject_CallMethodOneArg(parse, scan_name, matched);
    if (!scanned) return -1;
    if (scanned == Py_None) {
        Py_DECREF(scanned);
        *after = -1;
        *fresh = DEAD;
        return 1;
    }
    PyObject *start = PyObject_GetAttr(mutation == 11 ? parse : scanned, start_name);
    if (!start) {
        Py_DECREF(scanned);
        return -1;
    }
    if (start == Py_None && starts != Py_None && mutation != 11) {
        /* the parse's lexer start not set yet: the DFA's, where it has the state for the parse's
           origins key (Recognizer.lexer_start's lookup), set on the parse as Python sets it */
        PyObject *key = PyObject_GetAttr(scanned, key_name);
        PyObject *made = key ? PyDict_GetItemWithError(starts, key) : NULL;  /* borrowed */
        Py_XDECREF(key);
        if (made) {
            if (PyObject_SetAttr(scanned, start_name, made) < 0) {
                Py_DECREF(start);
                Py_DECREF(scanned);
                return -1;
            }
            Py_DECREF(start);
            Py_INCREF(made);
            start = made;
        } else if (PyErr_Occurred()) {
            Py_DECREF(start);
            Py_DECREF(scanned);
            return -1;
        }
    }
    if (start == Py_None) {  /* a lexer start state not made yet: Python makes it */
        Py_DECREF(start);
        Py_DECREF(scanned);
        return 0;
    }
    long begins = PyLong_AsLong(start);
    Py_DECREF(start);
    if (begins == -1 && PyErr_Occurred()) {
        Py_DECREF(scanned);
        return -1;
    }
    PyObject *found = PyDict_GetItemWithError(numbers, scanned);  /* borrowed */
    long at;
    if (found) at = PyLong_AsLong(found);
    else if (PyErr_Occurred()) at = -1;
    else {
        at = (long)PyList_GET_SIZE(parses);
        PyObject *value = PyLong_FromLong(at);
        if (!value || PyDict_SetItem(numbers, scanned, value) < 0 || PyList_Append(parses, scanned) < 0) at = -1;
        Py_XDECREF(value);
    }
    Py_DECREF(scanned);
    if (at == -1 && PyErr_Occurred()) return -1;
    *after = at;
    *fresh = begins;
    return 1;
}

/* An open-addressing table of boundary_part's kind (`width` int32 per slot, MEMO_EMPTY where free)
   twice as large, its entries moved: 0, or -1 with MemoryError set (the old table is kept). */
static int grow_pairs(int32_t **table, int64_t *slots, int width) {
    int64_t more = 2 * *slots;
    int32_t *grown = (int32_t *)malloc((size_t)(more * width) * sizeof(int32_t));
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t k = 0; k < more * width; k++) grown[k] = MEMO_EMPTY;
    for (int64_t s = 0; s < *slots; s++) {
        const int32_t *entry = *table + s * width;
        if (entry[0] == MEMO_EMPTY) continue;
        int64_t slot = find_slot(grown, more, width, entry[0], entry[1]);  /* never full: twice as large */
        for (int w = 0; w < width; w++) grown[slot * width + w] = entry[w];
    }
    free(*table);
    *table = grown;
    *slots = more;
    return 0;
}

/* The restart of (lexer state `lex`, parse number `number`) asked of `recognizer.restart(lex,
   parses[number])`, the parse after it numbered (appended to parses, entered in numbers) where it
   is new: 0 with *after (-1: none) and *fresh set, -1 with a Python error. */
static int python_restart(PyObject *recognizer, PyObject *parses, PyObject *numbers, long lex, long number,
                          long *after, long *fresh) {
    if (number < 0 || number >= PyList_GET_SIZE(parses)) {
        PyErr_SetString(PyExc_ValueError, "boundary_part: a parse number past the parses");
        return -1;
    }
    PyObject *answer = PyObject_CallMethod(recognizer, "restart", "lO", lex, PyList_GET_ITEM(parses, number));
    if (!answer) return -1;
    if (!PyTuple_Check(answer) || PyTuple_GET_SIZE(answer) != 2) {
        Py_DECREF(answer);
        PyErr_SetString(PyExc_TypeError, "boundary_part: restart returns (parse after or None, lexer state)");
        return -1;
    }
    PyObject *scanned = PyTuple_GET_ITEM(answer, 0);
    *fresh = PyLong_AsLong(PyTuple_GET_ITEM(answer, 1));
    long at = -1;
    if (!PyErr_Occurred() && scanned != Py_None) {
        PyObject *found = PyDict_GetItemWithError(numbers, scanned);  /* borrowed */
        if (found) at = PyLong_AsLong(found);
        else if (!PyErr_Occurred()) {
            at = (long)PyList_GET_SIZE(parses);
            PyObject *value = PyLong_FromLong(at);
            if (!value || PyDict_SetItem(numbers, scanned, value) < 0 || PyList_Append(parses, scanned) < 0) at = -1;
            Py_XDECREF(value);
        }
    }
    Py_DECREF(answer);
    if (PyErr_Occurred()) return -1;
    *after = scanned == Py_None ? -1 : at;
    return 0;
}

/* boundary_part: see the top of this file. */
static PyObject *boundary_part(PyObject *self, PyObject *args) {
    PyObject *o_byte, *o_depth, *o_end, *o_table, *o_acc, *o_pairs, *recognizer, *lexer, *parses, *o_known, *o_cell;
    PyObject *o_starts = Py_None;
    long max_depth, first_slots = 64;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OOOOOOlOOOOO|ilO", &o_byte, &o_depth, &o_end, &o_table, &o_acc, &o_pairs, &max_depth,
                          &recognizer, &lexer, &parses, &o_known, &o_cell, &mutation, &first_slots, &o_starts))
        return NULL;
    if (o_starts != Py_None && !PyDict_Check(o_starts)) {
        PyErr_SetString(PyExc_TypeError, "boundary_part: starts is a dict or None");
        return NULL;
    }
    if (valid_cell(o_cell, "boundary_part")) return NULL;
    if (!PyList_Check(parses) || PyList_GET_SIZE(parses) != 1 || (o_known != Py_None && !PyDict_Check(o_known))) {
        PyErr_SetString(PyExc_TypeError, "boundary_part: parses is a list of the one parse to start from, known a "
                                         "dict or None");
        return NULL;
    }
    if (max_depth < 0 || max_depth > (1 << 20) || first_slots < 1 || (first_slots & (first_slots - 1))) {
        PyErr_SetString(PyExc_ValueError, "boundary_part: max_depth out of range, or first_slots not a power of two");
        return NULL;
    }
    held_buffer b_byte, b_depth, b_end, b_table, b_acc, b_pairs;
    held_buffer *all[] = {&b_byte, &b_depth, &b_end, &b_table, &b_acc, &b_pairs};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) all[k]->held = 0;
    PyObject *result = NULL, *numbers = NULL, *known = NULL;
    int32_t *lex_stack = NULL, *parse_stack = NULL, *nodes = NULL, *memo = NULL, *reached = NULL;
    walk_inputs w;
    PyObject *const inputs[5] = {o_byte, o_depth, o_end, o_table, o_acc};
    held_buffer *const input_buffers[5] = {&b_byte, &b_depth, &b_end, &b_table, &b_acc};
    if (take_trie_and_lexer(inputs, input_buffers, &w) || take(o_pairs, &b_pairs, 4, 0, "pairs")) goto done;
    if (b_pairs.view.len % 8) {
        PyErr_SetString(PyExc_ValueError, "boundary_part: pairs holds (node, state) pairs of int32");
        goto done;
    }
    numbers = PyDict_New();
    PyObject *zero = PyLong_FromLong(0);
    if (!numbers || !zero || PyDict_SetItem(numbers, PyList_GET_ITEM(parses, 0), zero) < 0) {
        Py_XDECREF(zero);
        goto done;
    }
    Py_DECREF(zero);
    if (o_known != Py_None && !(known = PyTuple_Pack(4, o_known, parses, numbers, o_starts))) goto done;
    {
        const int32_t *tops = (const int32_t *)b_pairs.view.buf;
        const Py_ssize_t n_tops = b_pairs.view.len / 8, stack_len = max_depth + 1;
        int64_t memo_slots = first_slots, reached_slots = first_slots, node_room = 256;
        lex_stack = (int32_t *)malloc((size_t)stack_len * sizeof(int32_t));
        parse_stack = (int32_t *)malloc((size_t)stack_len * sizeof(int32_t));
        nodes = (int32_t *)malloc((size_t)node_room * sizeof(int32_t));
        memo = (int32_t *)malloc((size_t)(4 * memo_slots) * sizeof(int32_t));
        reached = (int32_t *)malloc((size_t)(2 * reached_slots) * sizeof(int32_t));
        if (!lex_stack || !parse_stack || !nodes || !memo || !reached) {
            PyErr_NoMemory();
            goto done;
        }
        for (int64_t k = 0; k < 4 * memo_slots; k++) memo[k] = MEMO_EMPTY;
        for (int64_t k = 0; k < 2 * reached_slots; k++) reached[k] = MEMO_EMPTY;
        int64_t n_nodes = 0, n_reached = 0, n_memo = 0, i = 0, k = 0;
        int started = 0;
        int32_t ask_lex = 0, ask_parse = 0;
    again:;
        long status = -1;
        int bad = 0; /* 1: out of range; 2: a table full */
        Py_BEGIN_ALLOW_THREADS
        for (; k < n_tops && !bad; k++) {
            int32_t top = tops[2 * k];
            if (top < 1 || top >= w.n) { bad = 1; break; }
            if (!started) {
                int32_t before = tops[2 * k + 1];
                int64_t slot = find_slot(memo, memo_slots, 4, before, 0);
                if (slot < 0) { bad = 2; break; }
                if (memo[4 * slot] == MEMO_EMPTY) { status = -2; ask_lex = before; ask_parse = 0; break; }
                int32_t after = memo[4 * slot + 2], fresh = memo[4 * slot + 3];
                if (fresh == DEAD) continue;
                int32_t base = w.depth_at[top] - 1;
                if (base < 0 || base >= stack_len) { bad = 1; break; }
                lex_stack[base] = fresh;
                parse_stack[base] = after;
                i = top;
                started = 1;
            }
            int32_t stop = w.end_at[top];
            while (i < stop) {
                int32_t d = w.depth_at[i];
                if (d < 1 || d >= stack_len) { bad = 1; break; }
                int32_t lex = lex_stack[d - 1], current = parse_stack[d - 1];
                if (lex < 0) { bad = 1; break; }
                /* a state made after this table was (a restart's start state): its transitions are missing */
                if (lex >= w.states || lex >= w.accepting_len) { status = lex; break; }
                uint8_t b = w.byte_at[i];
                int32_t nxt = w.table[(Py_ssize_t)lex * 256 + b] - STORED;
                if (nxt == UNBUILT) { status = lex; break; }
                if (nxt == DEAD) {
                    /* another boundary inside the token, where a lexeme matches */
                    if (!(w.accepting[lex] & 1)) { i = w.end_at[i]; continue; }
                    int64_t slot = find_slot(memo, memo_slots, 4, lex, current);
                    if (slot < 0) { bad = 2; break; }
                    if (memo[4 * slot] == MEMO_EMPTY) { status = -2; ask_lex = lex; ask_parse = current; break; }
                    int32_t scanned = memo[4 * slot + 2], restart = memo[4 * slot + 3];
                    if (restart == DEAD || mutation == 5) { i = w.end_at[i]; continue; }
                    if (restart < 0) { bad = 1; break; }
                    if (restart >= w.states || restart >= w.accepting_len) { status = restart; break; }
                    nxt = w.table[(Py_ssize_t)restart * 256 + b] - STORED;
                    if (nxt == UNBUILT) { status = restart; break; }
                    if (nxt == DEAD) { i = w.end_at[i]; continue; }
                    if (mutation != 4) current = scanned;
                }
                if (nxt < 0) { bad = 1; break; }
                /* room for one more node and one more pair first (reached kept at most half full) */
                if (n_nodes >= node_room) { status = -5; break; }
                if (2 * (n_reached + 1) > reached_slots) { status = -4; break; }
                lex_stack[d] = nxt;
                parse_stack[d] = current;
                nodes[n_nodes++] = (int32_t)i;
                int64_t slot = find_slot(reached, reached_slots, 2, nxt, current);
                if (slot < 0) { bad = 2; break; }
                if (reached[2 * slot] == MEMO_EMPTY) {
                    reached[2 * slot] = nxt;
                    reached[2 * slot + 1] = current;
                    n_reached++;
                }
                i++;
            }
            if (bad || status != -1) break;
            started = 0;
        }
        Py_END_ALLOW_THREADS
        if (bad) {
            PyErr_SetString(PyExc_ValueError, bad == 2 ? "boundary_part: a table is full"
                                                       : "boundary_part: a node, depth or state is out of range");
            goto done;
        }
        if (status == -2) {  /* a restart to answer, then kept in memo (at most half full) */
            if (2 * (n_memo + 1) > memo_slots && grow_pairs(&memo, &memo_slots, 4) < 0) goto done;
            long after = -1, fresh = -1;
            int answered = known ? known_restart(known, ask_lex, ask_parse, mutation, &after, &fresh) : 0;
            if (answered < 0) goto done;
            if (!answered && python_restart(recognizer, parses, numbers, ask_lex, ask_parse, &after, &fresh) < 0)
                goto done;
            int64_t slot = find_slot(memo, memo_slots, 4, ask_lex, ask_parse);
            int32_t *entry = memo + 4 * slot;
            entry[0] = ask_lex;
            entry[1] = ask_parse;
            entry[2] = (int32_t)after;
            entry[3] = (int32_t)fresh;
            n_memo++;
            goto again;
        }
        if (status == -4) {
            if (grow_pairs(&reached, &reached_slots, 2) < 0) goto done;
            goto again;
        }
        if (status == -5) {
            int32_t *more = (int32_t *)realloc(nodes, (size_t)(2 * node_room) * sizeof(int32_t));
            if (!more) {
                PyErr_NoMemory();
                goto done;
            }
            nodes = more;
            node_room *= 2;
            goto again;
        }
        if (status >= 0) {  /* a missing cell (or a state newer than the table), made where the walk stands */
            if (i < 0 || i >= w.n) {
                PyErr_SetString(PyExc_ValueError, "boundary_part: the node stopped at is out of range");
                goto done;
            }
            if (make_missing(o_cell, lexer, &w, &b_table, &b_acc, status, (int)w.byte_at[i], "boundary_part") < 0)
                goto done;
            goto again;
        }
        PyObject *o_nodes = PyBytes_FromStringAndSize((const char *)nodes, (Py_ssize_t)(n_nodes * 4));
        PyObject *o_reached = PyBytes_FromStringAndSize((const char *)reached, (Py_ssize_t)(reached_slots * 8));
        if (o_nodes && o_reached) result = Py_BuildValue("(NNL)", o_nodes, o_reached, (long long)n_reached);
        else {
            Py_XDECREF(o_nodes);
            Py_XDECREF(o_reached);
        }
    }
done:
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) release(all[k]);
    free(lex_stack);
    free(parse_stack);
    free(nodes);
    free(memo);
    free(reached);
    Py_XDECREF(numbers);
    Py_XDECREF(known);
    return result;
}

/* plain_successor(table, state, where[, mutation, cell]) -> int

   slices.plain_successor over the dense table: where every plain JSON string character (printable
   ASCII but '"' and '\\', and every well-formed multi-byte UTF-8 character, read byte by byte)
   leads `state`, when they all lead to one place. Returns that state, DEAD (-1) when none can be
   read, -2 when they go different ways or the exploration passes 4096 (lexer state, UTF-8
   position) items (slices.MAX_EXPLORED), or -3 when a transition is not in the table yet: its
   state and byte are written to where[0], where[1] (int64); the caller makes it
   (Lexer.dense_cell) and calls again with the grown table. cell: as walk_lexeme's, a missing
   transition is first made in place by make_cell (-3 only for what it leaves to Python), so a new
   state costs one call rather than one per missing cell, each starting over. mutation (tests
   only): 4 skips the continuation bytes. Runs with the GIL held: it is a few hundred table reads. */
#define PLAIN_MAX_EXPLORED 4096
#define PLAIN_SLOTS 16384 /* a power of two, over twice the most items kept */

static const uint8_t lead_lo[8] = {0xC2, 0xE0, 0xE1, 0xED, 0xEE, 0xF0, 0xF1, 0xF4};
static const uint8_t lead_hi[8] = {0xDF, 0xE0, 0xEC, 0xED, 0xEF, 0xF0, 0xF3, 0xF4};
static const uint8_t lead_count[8] = {1, 2, 2, 2, 2, 3, 3, 3};
static const uint8_t cont_lo[8] = {0x80, 0xA0, 0x80, 0x80, 0x80, 0x90, 0x80, 0x80};
static const uint8_t cont_hi[8] = {0xBF, 0xBF, 0xBF, 0x9F, 0xBF, 0xBF, 0xBF, 0x8F};

/* Adds key to the set; 1 if new, 0 if there already. */
static int plain_add(int64_t *slots, int64_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    for (uint64_t probe = h >> 50;; probe = (probe + 1) & (PLAIN_SLOTS - 1)) {
        if (slots[probe] == key) return 0;
        if (slots[probe] < 0) { slots[probe] = key; return 1; }
    }
}

static PyObject *plain_successor(PyObject *self, PyObject *args) {
    PyObject *o_table, *o_where, *o_cell = Py_None;
    long state;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OlO|iO", &o_table, &state, &o_where, &mutation, &o_cell)) return NULL;
    if (valid_cell(o_cell, "plain_successor")) return NULL;
    held_buffer b_table, b_where;
    b_table.held = b_where.held = 0;
    PyObject *result = NULL;
    int64_t *slots = NULL, *work = NULL;
    if (take(o_table, &b_table, 4, 0, "table") || take(o_where, &b_where, 8, 1, "where")) goto done;
    if (b_where.view.len < 16) { PyErr_SetString(PyExc_ValueError, "plain_successor: where holds two int64"); goto done; }
    {
        const int32_t *table = (const int32_t *)b_table.view.buf;
        const int64_t states = b_table.view.len / (256 * 4);
        int64_t *where = (int64_t *)b_where.view.buf;
        long answer = -2;
        int64_t missing_state = -1, missing_byte = -1;
#define STEP(S, B, OUT)                                                                   \
        do {                                                                              \
            int64_t s_ = (S);                                                             \
            int32_t v_ = s_ < states ? table[s_ * 256 + (B)] - STORED : UNBUILT;         \
            if (v_ == UNBUILT || v_ >= states) {                                          \
                int f_ = fast_cell_in(o_cell, table, states, (long)s_, (B));              \
                if (f_ < 0) goto done;                                                    \
                if (f_) v_ = table[s_ * 256 + (B)] - STORED;                              \
                if (!f_ || v_ >= states) { missing_state = s_; missing_byte = (B); goto decided; } \
            }                                                                             \
            (OUT) = v_;                                                                   \
        } while (0)
        if (state < 0 || state >= states) {
            if (state == DEAD) { answer = DEAD; goto decided; }
            missing_state = state; missing_byte = 0x20;
            goto decided;
        }
        int32_t target, nxt;
        STEP(state, 0x20, target);
        for (int b = 0x20; b < 0x80; b++) {
            if (b == 0x22 || b == 0x5C) continue;
            STEP(state, b, nxt);
            if (nxt != target) goto decided; /* None */
        }
        slots = malloc(PLAIN_SLOTS * sizeof(int64_t));
        work = malloc((PLAIN_MAX_EXPLORED + 64) * 4 * sizeof(int64_t));
        if (!slots || !work) { PyErr_NoMemory(); goto done; }
        memset(slots, 0xff, PLAIN_SLOTS * sizeof(int64_t));
        int64_t n_seen = 0, n_work = 0;
        for (int k = 0; k < 8; k++) {
            for (int b = lead_lo[k]; b <= lead_hi[k]; b++) {
                STEP(state, b, nxt);
                if (nxt == DEAD) {
                    if (target != DEAD) goto decided;
                    continue;
                }
                if (target == DEAD) goto decided; /* a lead byte lives on where ASCII dies */
                if (mutation == 4) continue;
                int64_t key = ((int64_t)nxt << 24) | ((int64_t)lead_count[k] << 16) | (cont_lo[k] << 8) | cont_hi[k];
                if (plain_add(slots, key)) {
                    n_seen++;
                    work[4 * n_work] = nxt; work[4 * n_work + 1] = lead_count[k];
                    work[4 * n_work + 2] = cont_lo[k]; work[4 * n_work + 3] = cont_hi[k];
                    n_work++;
                }
            }
        }
        while (n_work) {
            n_work--;
            int64_t lex = work[4 * n_work], count = work[4 * n_work + 1];
            int lo = (int)work[4 * n_work + 2], hi = (int)work[4 * n_work + 3];
            for (int b = lo; b <= hi; b++) {
                STEP(lex, b, nxt);
                if (count == 1) {
                    if (nxt != target) goto decided;
                    continue;
                }
                if (nxt == DEAD) goto decided;
                int64_t key = ((int64_t)nxt << 24) | ((count - 1) << 16) | (0x80 << 8) | 0xBF;
                if (plain_add(slots, key)) {
                    if (++n_seen > PLAIN_MAX_EXPLORED) goto decided;
                    work[4 * n_work] = nxt; work[4 * n_work + 1] = count - 1;
                    work[4 * n_work + 2] = 0x80; work[4 * n_work + 3] = 0xBF;
                    n_work++;
                }
            }
        }
        answer = target;
#undef STEP
    decided:
        if (missing_state >= 0) {
            where[0] = missing_state;
            where[1] = missing_byte;
            answer = -3;
        }
        result = PyLong_FromLong(answer);
    }
done:
    free(slots);
    free(work);
    release(&b_table);
    release(&b_where);
    return result;
}

/* plain_split(table, state, where, firsts[, mutation, cell]) -> int

   slices.plain_split over the dense table: for a state where plain characters go different ways,
   the place most plain ASCII bytes lead `state` to (T; ties: the least state), and in `firsts`
   (uint8, 256 entries, written) a 1 for each plain first byte all of whose plain characters lead
   there: a plain ASCII byte that leads to T, a UTF-8 lead byte whose every well-formed character
   (read byte by byte, never dead on the way) ends in T. Returns T, -2 when no plain ASCII byte
   leads anywhere live, -3 when a transition is not in the table yet (where[0], where[1] as for
   plain_successor; cell as plain_successor's). A lead byte whose characters take more than
   PLAIN_MAX_EXPLORED (state, position) items to check is left out: that is never wrong, its
   tokens are then walked.
   mutation (tests only): 5 admits a lead byte without checking its continuation bytes. */
typedef struct {
    const int32_t *table;
    PyObject *cell; /* (make_cell, core) or None: missing cells made in place (fast_cell_in) */
    int failed;     /* make_cell raised: the Python error is set */
    int64_t states, target, missing_state, missing_byte, explored;
    int64_t *keys; /* PLAIN_SLOTS: explored item keys, or -1 */
    int8_t *known; /* per slot: 1 every character from the item ends in T, 0 not */
} split_search;

/* The transition of `lex` on `b` in the search's table, made in place where the search has a
   cell maker and it can (UNBUILT where it cannot; q->failed where it raised). */
static int32_t split_read(split_search *q, int64_t lex, int b) {
    int32_t nxt = lex < q->states ? q->table[lex * 256 + b] - STORED : UNBUILT;
    if (nxt != UNBUILT && nxt < q->states) return nxt;
    int made = q->failed ? 0 : fast_cell_in(q->cell, q->table, q->states, (long)lex, b);
    if (made < 0) q->failed = 1;
    return made > 0 ? q->table[lex * 256 + b] - STORED : UNBUILT;
}

/* 1 when every well-formed rest of a character from lexer state `lex` (`count` continuation bytes
   still due, the next one in lo..hi) ends in the target with no dead state on the way, 0 when one
   does not, -1 when a transition is missing (recorded in the search), -2 past the exploration
   bound. Memoised per item. */
static int split_check(split_search *q, int64_t lex, int count, int lo, int hi) {
    int64_t key = (lex << 24) | ((int64_t)count << 16) | (lo << 8) | hi;
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    uint64_t slot = h >> 50;
    while (q->keys[slot] >= 0 && q->keys[slot] != key) slot = (slot + 1) & (PLAIN_SLOTS - 1);
    if (q->keys[slot] == key) return q->known[slot];
    if (++q->explored > PLAIN_MAX_EXPLORED) return -2;
    int answer = 1;
    for (int b = lo; b <= hi && answer == 1; b++) {
        int32_t nxt = split_read(q, lex, b);
        if (nxt == UNBUILT || nxt >= q->states) {
            q->missing_state = lex;
            q->missing_byte = b;
            return -1;
        }
        if (count == 1) answer = nxt == q->target;
        else if (nxt == DEAD) answer = 0;
        else answer = split_check(q, nxt, count - 1, 0x80, 0xBF);
    }
    if (answer < 0) return answer;
    q->keys[slot] = key;
    q->known[slot] = (int8_t)answer;
    return answer;
}

static PyObject *plain_split(PyObject *self, PyObject *args) {
    PyObject *o_table, *o_where, *o_firsts, *o_cell = Py_None;
    long state;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OlOO|iO", &o_table, &state, &o_where, &o_firsts, &mutation, &o_cell)) return NULL;
    if (valid_cell(o_cell, "plain_split")) return NULL;
    held_buffer b_table, b_where, b_firsts;
    b_table.held = b_where.held = b_firsts.held = 0;
    PyObject *result = NULL;
    split_search q;
    q.keys = NULL;
    q.known = NULL;
    if (take(o_table, &b_table, 4, 0, "table") || take(o_where, &b_where, 8, 1, "where") ||
        take(o_firsts, &b_firsts, 1, 1, "firsts"))
        goto done;
    if (b_where.view.len < 16 || b_firsts.view.len != 256) {
        PyErr_SetString(PyExc_ValueError, "plain_split: where holds two int64, firsts 256 bytes");
        goto done;
    }
    {
        uint8_t *firsts = (uint8_t *)b_firsts.view.buf;
        int64_t *where = (int64_t *)b_where.view.buf;
        memset(firsts, 0, 256);
        q.table = (const int32_t *)b_table.view.buf;
        q.states = b_table.view.len / (256 * 4);
        q.cell = o_cell;
        q.failed = 0;
        q.missing_state = q.missing_byte = -1;
        q.explored = 0;
        long answer = -2;
        if (state < 0 || state >= q.states) {
            q.missing_state = state;
            q.missing_byte = 0x20;
            goto decided;
        }
        int32_t next_of[256];
        for (int b = 0x20; b < 0x80; b++) {
            if (b == 0x22 || b == 0x5C) continue;
            int32_t v = split_read(&q, state, b);
            if (q.failed) goto done;
            if (v == UNBUILT || v >= q.states) { q.missing_state = state; q.missing_byte = b; goto decided; }
            next_of[b] = v;
        }
        /* the live successor of the most plain ASCII bytes, the least state on a tie */
        int64_t best = -1, best_count = 0;
        for (int b = 0x20; b < 0x80; b++) {
            if (b == 0x22 || b == 0x5C || next_of[b] < 0) continue;
            int64_t count = 0;
            for (int c = 0x20; c < 0x80; c++)
                if (c != 0x22 && c != 0x5C && next_of[c] == next_of[b]) count++;
            if (count > best_count || (count == best_count && next_of[b] < best)) { best = next_of[b]; best_count = count; }
        }
        if (best < 0) goto decided;
        q.target = best;
        for (int b = 0x20; b < 0x80; b++)
            if (b != 0x22 && b != 0x5C && next_of[b] == best) firsts[b] = 1;
        q.keys = malloc(PLAIN_SLOTS * sizeof(int64_t));
        q.known = malloc(PLAIN_SLOTS);
        if (!q.keys || !q.known) { PyErr_NoMemory(); goto done; }
        memset(q.keys, 0xff, PLAIN_SLOTS * sizeof(int64_t));
        int exhausted = 0;
        for (int k = 0; k < 8 && !exhausted; k++) {
            for (int b = lead_lo[k]; b <= lead_hi[k]; b++) {
                int32_t nxt = split_read(&q, state, b);
                if (q.failed) goto done;
                if (nxt == UNBUILT || nxt >= q.states) { q.missing_state = state; q.missing_byte = b; goto decided; }
                if (nxt == DEAD) continue;
                int ok = mutation == 5 ? 1 : split_check(&q, nxt, lead_count[k], cont_lo[k], cont_hi[k]);
                if (q.failed) goto done;
                if (ok == -1) goto decided;
                if (ok == -2) { exhausted = 1; break; }  /* the rest of the lead bytes are walked */
                firsts[b] = (uint8_t)ok;
            }
        }
        answer = best;
    decided:
        if (q.missing_state >= 0) {
            where[0] = q.missing_state;
            where[1] = q.missing_byte;
            answer = -3;
        }
        result = PyLong_FromLong(answer);
    }
done:
    free(q.keys);
    free(q.known);
    release(&b_table);
    release(&b_where);
    release(&b_firsts);
    return result;
}

/* rename_column(pairs, rename[, mutation]) -> bytes: a copy of ``pairs`` (int32 (node, state)
   rows, C order, as bytes or any buffer) with each state renamed by ``rename(state)``, asked once
   per distinct state (a twin's boundaries: thousands of rows, a handful of states). Mutation 1
   (tests): a state that ``rename`` changes is written as itself plus one. */
static PyObject *rename_column(PyObject *self, PyObject *args) {
    PyObject *o_pairs, *rename;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OO|i", &o_pairs, &rename, &mutation)) return NULL;
    if (!PyCallable_Check(rename)) {
        PyErr_SetString(PyExc_TypeError, "rename must be callable");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(o_pairs, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (view.len % (2 * (Py_ssize_t)sizeof(int32_t))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "pairs must be int32 (node, state) rows");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)view.buf, view.len);
    PyBuffer_Release(&view);
    if (!out) return NULL;
    int32_t *rows = (int32_t *)PyBytes_AS_STRING(out);
    Py_ssize_t count = PyBytes_GET_SIZE(out) / (2 * (Py_ssize_t)sizeof(int32_t));
    /* the states met so far and their new names, searched linearly: a part's boundaries name a
       handful of states (at most 4 over the compare set), so a table would cost more */
    int32_t seen_small[2 * 16];
    int32_t *seen = seen_small;
    Py_ssize_t seen_count = 0, seen_cap = 16;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t before = rows[2 * i + 1], after = 0;
        Py_ssize_t k = 0;
        while (k < seen_count && seen[2 * k] != before) k++;
        if (k < seen_count) {
            after = seen[2 * k + 1];
        } else {
            PyObject *answer = PyObject_CallFunction(rename, "i", before);
            if (!answer) goto fail;
            long value = PyLong_AsLong(answer);
            Py_DECREF(answer);
            if (value == -1 && PyErr_Occurred()) goto fail;
            if (value < INT32_MIN || value > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "a renamed state is outside int32");
                goto fail;
            }
            after = (int32_t)value;
            if (mutation == 1 && after != before) after = before + 1;
            if (seen_count == seen_cap) {
                int32_t *grown = (int32_t *)malloc(sizeof(int32_t) * 4 * (size_t)seen_cap);
                if (!grown) { PyErr_NoMemory(); goto fail; }
                memcpy(grown, seen, sizeof(int32_t) * 2 * (size_t)seen_count);
                if (seen != seen_small) free(seen);
                seen = grown;
                seen_cap *= 2;
            }
            seen[2 * seen_count] = before;
            seen[2 * seen_count + 1] = after;
            seen_count++;
        }
        rows[2 * i + 1] = after;
    }
    if (seen != seen_small) free(seen);
    return out;
fail:
    if (seen != seen_small) free(seen);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"lexeme_part", lexeme_part, METH_VARARGS,
     "lexeme_part(byte, depth, end, table, accepting, start, max_depth, lexer, cell, bits, node_token_start, "
     "node_token_ids, node_token, pure, rest_first[, loop, mutation]) -> (nodes, bounds, reached)\n"
     "The lexeme walk in one call (masking/walk.py): its nodes (None with bits), boundaries and states reached, as bytes."},
    {"drop_scratch", drop_scratch, METH_NOARGS, "Frees this thread's scratch of lexeme_part (tests)."},
    {"boundary_part", boundary_part, METH_VARARGS,
     "boundary_part(byte, depth, end, table, accepting, pairs, max_depth, recognizer, lexer, parses, known, cell"
     "[, mutation, first_slots]) -> (nodes, reached, count)\n"
     "The boundary walk in one call (masking/walk.py): the allowed nodes and the table of pairs reached, as bytes."},
    {"plain_successor", plain_successor, METH_VARARGS,
     "plain_successor(table, state, where[, mutation, cell])\n"
     "Where every plain JSON string character leads a lexer state, if one place (masking/slices.py)."},
    {"plain_split", plain_split, METH_VARARGS,
     "plain_split(table, state, where, firsts[, mutation, cell])\n"
     "Where most plain characters lead a lexer state, and the first bytes whose characters all go there (masking/slices.py)."},
    {"rename_column", rename_column, METH_VARARGS,
     "rename_column(pairs, rename[, mutation]) -> bytes\n"
     "A copy of int32 (node, state) rows with each state renamed by rename(state), asked once per distinct state."},
    {"set_token_bits", set_token_bits, METH_VARARGS,
     "set_token_bits(nodes, node_token_start, node_token_ids, bits[, mutation])\n"
     "Set the bit of every token spelled at the given trie nodes (masking/walk.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", "Trie walks in C (masking/walk.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__walk(void) { return PyModule_Create(&module); }
