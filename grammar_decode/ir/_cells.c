/* A lexer transition made in one call: engine/dfa.py's LexemeDFA._store_cell for the common case,
   in C, so that a cell costs a derivative of each pair and no Python frame.

   Store.make_cell(core, state, byte) -> int or None

   core:   the DFA's state as a tuple, made by LexemeDFA (its lists are shared, not copied):
           (pairs, accepting, matches, closed, rows, tags, ids, table, accepts, lock, none, limit, no_tags)
           pairs ... tags: the DFA's per-state lists; ids: its dict from pairs to state;
           table: the dense int32 table (each transition plus STORED); accepts: uint8 per state;
           lock: the DFA's lock (held while a state is appended); none: the shared empty frozenset;
           limit: the state id from which Python makes new states (it retires the set, grows the
           tables); no_tags: the empty tuple the tags list holds for a state without guards.

   A state past the core's table (a core taken before the table grew, as a walk holds one) is left
   to Python (None), as is a state with guarded pairs (a non-empty tags entry): its transitions
   are made one byte at a time (LexemeDFA._guarded_step). Otherwise the state's pairs are derived
   by `byte` (step_live); where a derivative may still be empty
   (it holds & or ¬ and is not nullable) the answer is None and the caller makes the cell the
   Python way (ExprSet.is_empty decides). Otherwise the pairs left are interned: looked up in ids,
   or appended as a new state exactly as LexemeDFA._intern_live appends one (under the lock, ids
   written last, so readers see whole states only); new states at or past `limit` are also left
   to Python (None). The target is written into the table for every byte of the class, and once
   the row has no cell left to make, the row tuple is published in rows. Returns the target (a
   state, or DEAD = -1).

   Threads: everything runs with the GIL held and no Python code is called but the lock's acquire
   and release; the cells written are the ones any thread would write (a state's id is unique),
   so a race between two threads making one cell writes the same values. */

#define PY_SSIZE_T_CLEAN
#include "_exprs.h"

#define DEAD (-1)
#define STORED 2
enum { PAIRS, ACCEPTING, MATCHES, CLOSED, ROWS, TAGS, IDS, TABLE, ACCEPTS, LOCK, NONE_SET, LIMIT, NO_TAGS, CORE_SIZE };

/* The new state of `live` (whose derivatives are known non-empty) appended to the DFA's lists:
   its id, or -2 where Python must make it (past the limit), -1 with an exception on error. */
static long append_state(Store *s, PyObject *const *core, PyObject *live, uint8_t *accepts, Py_ssize_t n_accepts,
                         long limit) {
    PyObject *pairs = core[PAIRS];
    long state = (long)PyList_GET_SIZE(pairs);
    if (state >= limit || state >= n_accepts) return -2;
    Py_ssize_t count = PyTuple_GET_SIZE(live);
    PyObject *origins = PyList_New(0);
    if (!origins) return -1;
    int closed = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = PyTuple_GET_ITEM(live, i);
        int32_t e = node_arg(s, PyTuple_GET_ITEM(pair, 1));
        if (e < 0) { Py_DECREF(origins); return -1; }
        const Node *node = &s->nodes[e];
        if (!is_zero(node->first)) closed = 0;
        if (node->nullable && PyList_Append(origins, PyTuple_GET_ITEM(pair, 0)) < 0) {
            Py_DECREF(origins);
            return -1;
        }
    }
    int matching = PyList_GET_SIZE(origins) > 0 && s->mutation != 4;  /* 4 (tests only): never accepting */
    PyObject *accepting = matching ? PyFrozenSet_New(origins) : (Py_INCREF(core[NONE_SET]), core[NONE_SET]);
    Py_DECREF(origins);
    if (!accepting) return -1;
    PyObject *id = PyLong_FromLong(state);
    int failed = !id || PyList_Append(core[ACCEPTING], accepting) < 0 ||
                 PyList_Append(core[MATCHES], matching ? Py_True : Py_False) < 0 ||
                 PyList_Append(core[CLOSED], closed ? Py_True : Py_False) < 0;
    Py_DECREF(accepting);
    if (!failed) {
        accepts[state] = (uint8_t)matching;
        failed = PyList_Append(core[ROWS], Py_None) < 0 || PyList_Append(core[TAGS], core[NO_TAGS]) < 0 ||
                 PyList_Append(pairs, live) < 0 || PyDict_SetItem(core[IDS], live, id) < 0;  /* published last */
    }
    Py_XDECREF(id);
    return failed ? -1 : state;
}

/* The state of `live`: found in ids, or appended under the DFA's lock (-2: Python makes it). */
static long intern_live(Store *s, PyObject *const *core, PyObject *live, uint8_t *accepts, Py_ssize_t n_accepts,
                        long limit) {
    if (PyTuple_GET_SIZE(live) == 0) return DEAD;
    PyObject *found = PyDict_GetItemWithError(core[IDS], live);
    if (found) return PyLong_AsLong(found);
    if (PyErr_Occurred()) return -1;
    PyObject *held = PyObject_CallMethod(core[LOCK], "acquire", NULL);
    if (!held) return -1;
    Py_DECREF(held);
    long state;
    found = PyDict_GetItemWithError(core[IDS], live);  /* another thread may have made it meanwhile */
    if (found) state = PyLong_AsLong(found);
    else state = PyErr_Occurred() ? -1 : append_state(s, core, live, accepts, n_accepts, limit);
    PyObject *type, *value, *traceback;  /* an error while the lock was held, kept across release() */
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethod(core[LOCK], "release", NULL);
    Py_XDECREF(released);
    if (type) {
        if (released) PyErr_Restore(type, value, traceback);
        else {
            Py_DECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(traceback);
        }
        return -1;
    }
    return released ? state : -1;
}

PyObject *store_make_cell(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != CORE_SIZE) {
        PyErr_SetString(PyExc_TypeError, "make_cell(core: a tuple of 13, state, byte)");
        return NULL;
    }
    PyObject *const *core = &PyTuple_GET_ITEM(args[0], 0);
    long state = PyLong_AsLong(args[1]), byte = PyLong_AsLong(args[2]), limit = PyLong_AsLong(core[LIMIT]);
    if ((state == -1 || byte == -1 || limit == -1) && PyErr_Occurred()) return NULL;
    if (!PyList_Check(core[PAIRS]) || !PyList_Check(core[ACCEPTING]) || !PyList_Check(core[MATCHES]) ||
        !PyList_Check(core[CLOSED]) || !PyList_Check(core[ROWS]) || !PyList_Check(core[TAGS]) ||
        !PyDict_Check(core[IDS])) {
        PyErr_SetString(PyExc_TypeError, "make_cell: the core's lists and dict are not lists and a dict");
        return NULL;
    }
    if (byte < 0 || byte > 255 || state < 0 || state >= PyList_GET_SIZE(core[PAIRS]) ||
        state >= PyList_GET_SIZE(core[TAGS])) {
        PyErr_SetString(PyExc_IndexError, "make_cell: no such state or byte");
        return NULL;
    }
    Py_buffer table, accepts;
    if (PyObject_GetBuffer(core[TABLE], &table, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(core[ACCEPTS], &accepts, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&table);
        return NULL;
    }
    PyObject *result = NULL;
    if (table.itemsize != 4 || accepts.itemsize != 1) {
        PyErr_SetString(PyExc_ValueError, "make_cell: the table is not int32, or accepts not uint8");
        goto done;
    }
    if ((state + 1) * 256 > table.len / 4) {  /* a core older than the table (it grew since): Python's */
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    int32_t *row = (int32_t *)table.buf + state * 256;
    if (row[byte] != 0) {  /* made meanwhile */
        result = PyLong_FromLong(row[byte] - STORED);
        goto done;
    }
    PyObject *tags = PyList_GET_ITEM(core[TAGS], state);
    if (!PyTuple_Check(tags) || PyTuple_GET_SIZE(tags) != 0) {  /* guarded pairs: made byte by byte in Python */
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    uint64_t klass[4];
    Ids unsure;
    ids_init(&unsure);
    PyObject *live = step_live(s, PyList_GET_ITEM(core[PAIRS], state), (int)byte, klass, &unsure);
    int sure = unsure.n == 0;
    ids_free(&unsure);
    if (!live) goto done;
    if (!sure) {  /* a derivative that may be empty: the Python way decides */
        Py_DECREF(live);
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    long target = intern_live(s, core, live, (uint8_t *)accepts.buf, accepts.len, limit);
    Py_DECREF(live);
    if (target == -2) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    if (target < -1 || (target == -1 && PyErr_Occurred())) goto done;
    /* the whole class at once; the row published once no cell is left to make */
    int left = 0;
    for (int b = 0; b < 256; b++) {
        if (has_byte(klass, b)) row[b] = (int32_t)(target + STORED);
        left += row[b] == 0;
    }
    if (!left && PyList_GET_ITEM(core[ROWS], state) == Py_None) {
        PyObject *cells = PyTuple_New(256);
        for (int b = 0; cells && b < 256; b++) {
            PyObject *value = PyLong_FromLong(row[b] - STORED);
            if (!value) Py_CLEAR(cells);
            else PyTuple_SET_ITEM(cells, b, value);
        }
        if (!cells || PyList_SetItem(core[ROWS], state, cells) < 0) goto done;  /* SetItem steals cells */
    }
    result = PyLong_FromLong(target);
done:
    PyBuffer_Release(&table);
    PyBuffer_Release(&accepts);
    return result;
}
