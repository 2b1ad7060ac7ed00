/* The lexeme walk of masking/walk.py over flat arrays, in C.

   walk_lexeme(byte, depth, end, table, accepting, start, resume, stack, nodes, bounds, counts, seen, reached[, mutation])

   byte, depth, end:  the vocabulary trie (vocab/trie.py) as uint8, int32, int32 buffers of n nodes.
   table:             the lexer's transitions, int32, 256 per state: the next state, DEAD (-1), or
                      UNBUILT (-2) where the state's row is not built yet.
   accepting:         uint8 per state (bit 0): a lexeme matches there.
   start:             the lexer state the walk begins in.
   resume:            the node to go on from (1 on the first call).
   stack:             int32, max_depth + 1 entries: the lexer state per depth (the caller keeps it
                      between calls; stack[0] = start).
   nodes:             int32 out, n entries: the nodes whose bytes all stay inside the lexeme.
   bounds:            int32 out, 2 n entries: (node, lexer state before its byte) where the lexeme
                      must end.
   counts:            int64[4] in/out: how many nodes and bounds are written so far; out: the node
                      to resume at (counts[2]); how many states are written to reached (counts[3]).
   seen:              uint8 in/out, at least one per lexer state: set to 1 for each state an
                      allowed node leads to (the caller clears the entries reached names, so one
                      buffer serves many walks without an O(states) clear per walk).
   reached:           int32 out, n entries: each state seen turns to 1, once.
   mutation:          tests only: 1 walks a rejected byte's subtree, 2 drops boundaries.

   Returns -1 when the walk is done, or the lexer state whose row is missing: the caller builds
   it, writes it into the table (a grown table, and a grown seen, may be passed on the next call)
   and calls again with resume = counts[2]. The walk releases the GIL: it touches no Python
   object.

   set_token_bits(nodes, node_token_start, node_token_ids, bits[, mutation])

   nodes:             int32, the trie nodes a walk allowed.
   node_token_start:  int64, one more than the trie's nodes: the tokens spelled at node j are
                      node_token_ids[node_token_start[j] : node_token_start[j + 1]] (vocab/trie.py).
   node_token_ids:    int64 token ids.
   bits:              uint8 in/out: bit t % 8 of byte t / 8 is set for each such token t.
   mutation:          tests only: 3 leaves out the last token spelled at each node.

   The mask of a walk in one pass over its nodes, without the GIL (the Python reference gathers
   the ids with numpy, sets a bool mask and packs it: three passes over arrays as long as the
   walk and the vocabulary). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define DEAD (-1)
#define UNBUILT (-2)

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

static PyObject *walk_lexeme(PyObject *self, PyObject *args) {
    PyObject *o_byte, *o_depth, *o_end, *o_table, *o_acc, *o_stack, *o_nodes, *o_bounds, *o_counts, *o_seen,
        *o_reached;
    long start, resume;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "OOOOOllOOOOOO|i", &o_byte, &o_depth, &o_end, &o_table, &o_acc, &start, &resume,
                          &o_stack, &o_nodes, &o_bounds, &o_counts, &o_seen, &o_reached, &mutation))
        return NULL;
    held_buffer b_byte, b_depth, b_end, b_table, b_acc, b_stack, b_nodes, b_bounds, b_counts, b_seen, b_reached;
    held_buffer *all[] = {&b_byte, &b_depth, &b_end, &b_table, &b_acc, &b_stack, &b_nodes, &b_bounds, &b_counts,
                          &b_seen, &b_reached};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) all[k]->held = 0;
    PyObject *result = NULL;
    if (take(o_byte, &b_byte, 1, 0, "byte") || take(o_depth, &b_depth, 4, 0, "depth") ||
        take(o_end, &b_end, 4, 0, "end") || take(o_table, &b_table, 4, 0, "table") ||
        take(o_acc, &b_acc, 1, 0, "accepting") || take(o_stack, &b_stack, 4, 1, "stack") ||
        take(o_nodes, &b_nodes, 4, 1, "nodes") || take(o_bounds, &b_bounds, 4, 1, "bounds") ||
        take(o_counts, &b_counts, 8, 1, "counts") || take(o_seen, &b_seen, 1, 1, "seen") ||
        take(o_reached, &b_reached, 4, 1, "reached"))
        goto done;
    {
        const uint8_t *byte_at = (const uint8_t *)b_byte.view.buf;
        const int32_t *depth_at = (const int32_t *)b_depth.view.buf;
        const int32_t *end_at = (const int32_t *)b_end.view.buf;
        const int32_t *table = (const int32_t *)b_table.view.buf;
        const uint8_t *accepting = (const uint8_t *)b_acc.view.buf;
        int32_t *stack = (int32_t *)b_stack.view.buf;
        int32_t *nodes = (int32_t *)b_nodes.view.buf;
        int32_t *bounds = (int32_t *)b_bounds.view.buf;
        int64_t *counts = (int64_t *)b_counts.view.buf;
        uint8_t *seen = (uint8_t *)b_seen.view.buf;
        int32_t *reached = (int32_t *)b_reached.view.buf;
        const Py_ssize_t seen_len = b_seen.view.len;
        const Py_ssize_t n = b_byte.view.len;
        const Py_ssize_t states = b_table.view.len / (256 * 4);
        const Py_ssize_t accepting_len = b_acc.view.len;
        const Py_ssize_t stack_len = b_stack.view.len / 4;
        if (b_depth.view.len != 4 * n || b_end.view.len != 4 * n || b_nodes.view.len < 4 * n ||
            b_bounds.view.len < 8 * n || b_counts.view.len < 32 || b_reached.view.len < 4 * n) {
            PyErr_SetString(PyExc_ValueError, "walk_lexeme: buffers of mismatched sizes");
            goto done;
        }
        if (start < 0 || start >= states || stack_len < 1 || resume < 1) {
            PyErr_SetString(PyExc_ValueError, "walk_lexeme: start state or resume node out of range");
            goto done;
        }
        Py_ssize_t i = resume;
        int64_t n_nodes = counts[0], n_bounds = counts[1], n_reached = counts[3];
        long missing = -1;
        int bad = 0;
        Py_BEGIN_ALLOW_THREADS
        while (i < n) {
            int32_t d = depth_at[i];
            if (d < 1 || d >= stack_len) { bad = 1; break; }
            int32_t parent = stack[d - 1];
            if (parent < 0 || parent >= states || parent >= accepting_len) { bad = 1; break; }
            int32_t nxt = table[(Py_ssize_t)parent * 256 + byte_at[i]];
            if (nxt == UNBUILT) { missing = parent; break; }
            if (nxt >= 0 && nxt >= seen_len) { bad = 1; break; }
            if (nxt == DEAD) {
                if ((accepting[parent] & 1) && mutation != 2) {
                    bounds[2 * n_bounds] = (int32_t)i;
                    bounds[2 * n_bounds + 1] = parent;
                    n_bounds++;
                }
                /* mutation 1 (tests only): step into the rejected subtree instead of skipping it */
                i = mutation == 1 ? i + 1 : end_at[i];
                continue;
            }
            stack[d] = nxt;
            if (!seen[nxt]) {
                seen[nxt] = 1;
                reached[n_reached++] = nxt;
            }
            nodes[n_nodes++] = (int32_t)i;
            i++;
        }
        Py_END_ALLOW_THREADS
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "walk_lexeme: a trie depth or lexer state is outside its table");
            goto done;
        }
        counts[0] = n_nodes;
        counts[1] = n_bounds;
        counts[2] = (int64_t)i;
        counts[3] = n_reached;
        result = PyLong_FromLong(missing);
    }
done:
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) release(all[k]);
    return result;
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
            int64_t from = start[node], to = start[node + 1];
            if (from < 0 || to > n_ids || from > to) { bad = 1; break; }
            if (mutation == 3 && to > from) to--; /* tests only: a token left out */
            for (int64_t j = from; j < to; j++) {
                int64_t token = ids[j];
                if (token < 0 || token >= width) { bad = 1; break; }
                bits[token >> 3] |= (uint8_t)(1u << (token & 7));
            }
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

static PyMethodDef methods[] = {
    {"walk_lexeme", walk_lexeme, METH_VARARGS,
     "walk_lexeme(byte, depth, end, table, accepting, start, resume, stack, nodes, bounds, counts, seen, reached"
     "[, mutation])\n"
     "The lexeme walk over flat arrays (masking/walk.py); -1 when done, else the state whose row is missing."},
    {"set_token_bits", set_token_bits, METH_VARARGS,
     "set_token_bits(nodes, node_token_start, node_token_ids, bits[, mutation])\n"
     "Set the bit of every token spelled at the given trie nodes (masking/walk.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", "Trie walks in C (masking/walk.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__walk(void) { return PyModule_Create(&module); }
