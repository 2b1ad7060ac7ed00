/* A lexer transition made in one call: engine/dfa.py's LexemeDFA._store_cell for the common case,
   in C, so that a cell costs a derivative of each pair and no Python frame.

   Store.make_cell(core, state, byte) -> int or None

   core:   the DFA's state as a tuple, made by LexemeDFA (its lists are shared, not copied):
           (pairs, accepting, matches, closed, rows, tags, ids, table, accepts, lock, none, limit, no_tags,
           moves)
           pairs ... tags: the DFA's per-state lists; ids: its dict from pairs to state;
           table: the dense int32 table (each transition plus STORED); accepts: uint8 per state;
           lock: the DFA's lock (held while a state is appended); none: the shared empty frozenset;
           limit: the state id from which Python makes new states (it retires the set, grows the
           tables); no_tags: the empty tuple the tags list holds for a state without guards;
           moves: the guards' moves Python has noted (LexemeDFA._note_moves, guard_move below).

   A state past the core's table (a core taken before the table grew, as a walk holds one) is left
   to Python (None). Otherwise the state's pairs are derived by `byte` (step_live); where a
   derivative may still be empty (it holds & or ¬ and is not nullable) the answer is None and the
   caller makes the cell the Python way (ExprSet.is_empty decides). Otherwise the pairs left are
   interned: looked up in ids, or appended as a new state exactly as LexemeDFA._intern_live
   appends one (under the lock, ids written last, so readers see whole states only); new states at
   or past `limit` are also left to Python (None). The target is written into the table for every
   byte of the class, and once the row has no cell left to make, the row tuple is published in
   rows. Returns the target (a state, or DEAD = -1).

   A state with one guarded pair (a host name's) is made here too where Python has noted its tag's
   moves: per class of the guard's splits, the tag the byte leads to, one that needs no witness
   (so the pair is vouched for: LexemeDFA._vouched) and whether it is complete. The class is then
   narrowed to the bytes that move the tag alike, the pair keyed with its new tag ((live, tags), as
   LexemeDFA._intern keys it) or dropped where the guard rejects the byte, and a new state matches
   the guarded lexeme only where its tag is complete. Such a state's row stays Python's (a lazy
   row, LexemeDFA._guarded_row): only the table's cells are written. Several guarded pairs, a tag
   whose moves are not noted, and a class whose tag needs a witness are left to Python (None).

   Threads: everything runs with the GIL held and no Python code is called but the lock's acquire
   and release; the cells written are the ones any thread would write (a state's id is unique),
   so a race between two threads making one cell writes the same values. */

#define PY_SSIZE_T_CLEAN
#include "_exprs.h"

#define DEAD (-1)
#define STORED 2
enum { PAIRS, ACCEPTING, MATCHES, CLOSED, ROWS, TAGS, IDS, TABLE, ACCEPTS, LOCK, NONE_SET, LIMIT, NO_TAGS, MOVES, CORE_SIZE };

/* The guarded pair of a new state, where it has one: its origin, whether its tag is complete,
   and the state's tags entry ((origin, tag),); origin -1 and the tags entry NO_TAGS without. */
typedef struct { long origin; int complete; PyObject *tags; } Guarded;

/* The new state of `live` (whose derivatives are known non-empty) appended to the DFA's lists
   under `key` (live, or (live, tags) for a guarded state): its id, or -2 where Python must make
   it (past the limit), -1 with an exception on error. */
static long append_state(Store *s, PyObject *const *core, PyObject *live, PyObject *key, const Guarded *guarded,
                         uint8_t *accepts, Py_ssize_t n_accepts, long limit) {
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
        if (!node->nullable) continue;
        if (guarded->origin >= 0 && !guarded->complete) {  /* a guarded lexeme matches where its tag is complete */
            long origin = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0));
            if (origin == -1 && PyErr_Occurred()) { Py_DECREF(origins); return -1; }
            if (origin == guarded->origin) continue;
        }
        if (PyList_Append(origins, PyTuple_GET_ITEM(pair, 0)) < 0) {
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
        untrack_tuples(key, 6);  /* a tracked key would have the collector track ids again (untracked())*/
        failed = PyList_Append(core[ROWS], Py_None) < 0 || PyList_Append(core[TAGS], guarded->tags) < 0 ||
                 PyList_Append(pairs, live) < 0 || PyDict_SetItem(core[IDS], key, id) < 0;  /* published last */
    }
    Py_XDECREF(id);
    return failed ? -1 : state;
}

/* The state of `live` under `key`: found in ids, or appended under the DFA's lock (-2: Python
   makes it). */
static long intern_live(Store *s, PyObject *const *core, PyObject *live, PyObject *key, const Guarded *guarded,
                        uint8_t *accepts, Py_ssize_t n_accepts, long limit) {
    if (PyTuple_GET_SIZE(live) == 0) return DEAD;
    PyObject *found = PyDict_GetItemWithError(core[IDS], key);
    if (found) return PyLong_AsLong(found);
    if (PyErr_Occurred()) return -1;
    PyObject *held = PyObject_CallMethod(core[LOCK], "acquire", NULL);
    if (!held) return -1;
    Py_DECREF(held);
    long state;
    found = PyDict_GetItemWithError(core[IDS], key);  /* another thread may have made it meanwhile */
    if (found) state = PyLong_AsLong(found);
    else state = PyErr_Occurred() ? -1 : append_state(s, core, live, key, guarded, accepts, n_accepts, limit);
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

/* A guarded pair's move on one byte (guard_move): its origin, the tag it moves to (a new
   reference; None: the guard rejects the byte), whether that tag is complete, and the bytes that
   move alike (the class of the byte among the guard's splits at the tag). */
typedef struct { long origin; int complete; PyObject *next; uint64_t bytes[4]; } Move;

/* The move on `byte` of the one guarded pair of a state whose tags entry is `tags`, read from the
   DFA's moves (LexemeDFA._note_moves): a dict keyed by the tags entry's item (origin, tag), each a
   tuple (the class of every byte as 256 bytes, 255 where Python makes the cell; per class the next
   tag; per class whether it is complete), or None where every cell is Python's. 1 where the moves
   have it, 0 where Python makes the cell (several guarded pairs, a tag not noted, a class left to
   Python), -1 with an exception on error. */
static int guard_move(PyObject *const *core, PyObject *tags, int byte, Move *move) {
    if (PyTuple_GET_SIZE(tags) != 1) return 0;
    PyObject *entry = PyTuple_GET_ITEM(tags, 0);
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
        PyErr_SetString(PyExc_TypeError, "make_cell: a tags entry is a tuple of (origin, tag) pairs");
        return -1;
    }
    PyObject *moves = PyDict_GetItemWithError(core[MOVES], entry);
    if (!moves) return PyErr_Occurred() ? -1 : 0;
    if (moves == Py_None) return 0;
    if (!PyTuple_Check(moves) || PyTuple_GET_SIZE(moves) != 3 || !PyBytes_Check(PyTuple_GET_ITEM(moves, 0)) ||
        PyBytes_GET_SIZE(PyTuple_GET_ITEM(moves, 0)) != 256 || !PyTuple_Check(PyTuple_GET_ITEM(moves, 1)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(moves, 2))) {
        PyErr_SetString(PyExc_TypeError, "make_cell: moves are (bytes of 256 classes, next tags, completes)");
        return -1;
    }
    const unsigned char *class_of = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(moves, 0));
    PyObject *nexts = PyTuple_GET_ITEM(moves, 1), *completes = PyTuple_GET_ITEM(moves, 2);
    Py_ssize_t c = class_of[byte];
    if (c == 255 || c >= PyTuple_GET_SIZE(nexts) || c >= PyTuple_GET_SIZE(completes)) return 0;
    move->origin = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (move->origin == -1 && PyErr_Occurred()) return -1;
    move->complete = PyTuple_GET_ITEM(completes, c) == Py_True;
    move->next = PyTuple_GET_ITEM(nexts, c);
    Py_INCREF(move->next);  /* held: the moves may be cleared while the DFA's lock is taken */
    memset(move->bytes, 0, sizeof move->bytes);
    for (int b = 0; b < 256; b++)
        if (class_of[b] == c) move->bytes[b >> 6] |= (uint64_t)1 << (b & 63);
    return 1;
}

/* `live` with the pair of the guarded origin dropped, or keyed with its new tag: the key to
   intern (a new reference: live itself, or (live, tags)) and the guarded pair's description in
   `guarded` (its tags entry a new reference, or NO_TAGS where the pair is gone). `*live` may be
   replaced by a new tuple (the reference passed is released). NULL with an exception on error. */
static PyObject *guarded_key(PyObject *const *core, PyObject **live, const Move *move, Guarded *guarded) {
    Py_ssize_t count = PyTuple_GET_SIZE(*live), at = -1;
    for (Py_ssize_t i = 0; i < count && at < 0; i++) {
        long origin = PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(*live, i), 0));
        if (origin == -1 && PyErr_Occurred()) return NULL;
        if (origin == move->origin) at = i;
    }
    if (at >= 0 && move->next == Py_None) {  /* the guard rejects the byte */
        PyObject *kept = PyTuple_New(count - 1);
        if (!kept) return NULL;
        for (Py_ssize_t i = 0, j = 0; i < count; i++) {
            if (i == at) continue;
            PyObject *pair = PyTuple_GET_ITEM(*live, i);
            Py_INCREF(pair);
            PyTuple_SET_ITEM(kept, j++, pair);
        }
        Py_SETREF(*live, kept);
        at = -1;
    }
    guarded->origin = -1;
    guarded->complete = 0;
    guarded->tags = core[NO_TAGS];
    Py_INCREF(guarded->tags);
    if (at < 0) {
        Py_INCREF(*live);
        return *live;
    }
    PyObject *entry = PyTuple_Pack(2, PyTuple_GET_ITEM(PyTuple_GET_ITEM(*live, at), 0), move->next);
    PyObject *tags = entry ? PyTuple_Pack(1, entry) : NULL;
    Py_XDECREF(entry);
    if (!tags) return NULL;
    Py_SETREF(guarded->tags, tags);
    guarded->origin = move->origin;
    guarded->complete = move->complete;
    return PyTuple_Pack(2, *live, tags);
}

/* Distinct targets a row shares one int object each among; a row with more makes the others one by one. */
#define ROW_SHARED 32

PyObject *row_tuple(const int32_t *row, int32_t bias) {
    PyObject *cells = PyTuple_New(256);
    if (!cells) return NULL;
    int32_t seen[ROW_SHARED];
    PyObject *shared[ROW_SHARED];
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int32_t target = row[b] - bias;
        PyObject *value = NULL;
        for (int k = 0; k < n && !value; k++)
            if (seen[k] == target) value = shared[k];
        if (value) Py_INCREF(value);
        else {
            value = PyLong_FromLong(target);
            if (!value) {
                Py_DECREF(cells);
                return NULL;
            }
            if (n < ROW_SHARED) {
                seen[n] = target;
                shared[n++] = value;  /* borrowed: the tuple holds it */
            }
        }
        PyTuple_SET_ITEM(cells, b, value);
    }
    PyObject_GC_UnTrack(cells);
    return cells;
}

PyObject *store_make_cell(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != CORE_SIZE) {
        PyErr_SetString(PyExc_TypeError, "make_cell(core: a tuple of 14, state, byte)");
        return NULL;
    }
    PyObject *const *core = &PyTuple_GET_ITEM(args[0], 0);
    long state = PyLong_AsLong(args[1]), byte = PyLong_AsLong(args[2]), limit = PyLong_AsLong(core[LIMIT]);
    if ((state == -1 || byte == -1 || limit == -1) && PyErr_Occurred()) return NULL;
    if (!PyList_Check(core[PAIRS]) || !PyList_Check(core[ACCEPTING]) || !PyList_Check(core[MATCHES]) ||
        !PyList_Check(core[CLOSED]) || !PyList_Check(core[ROWS]) || !PyList_Check(core[TAGS]) ||
        !PyDict_Check(core[IDS]) || !PyDict_Check(core[MOVES])) {
        PyErr_SetString(PyExc_TypeError, "make_cell: the core's lists and dicts are not lists and dicts");
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
    Move move = {-1, 0, NULL, {0, 0, 0, 0}};
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
    if (!PyTuple_Check(tags)) {
        PyErr_SetString(PyExc_TypeError, "make_cell: a tags entry is a tuple");
        goto done;
    }
    if (PyTuple_GET_SIZE(tags) != 0) {  /* a guarded pair: its move noted by Python, or Python's cell */
        int noted = guard_move(core, tags, (int)byte, &move);
        if (noted < 0) goto done;
        if (!noted) {
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
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
    Guarded guarded = {-1, 0, core[NO_TAGS]};
    PyObject *key = live;
    Py_INCREF(key);
    Py_INCREF(guarded.tags);
    if (move.next) {  /* the bytes that move the guard alike, and the pair keyed with its new tag */
        if (s->mutation != 6)  /* 6 (tests only): the class not narrowed to the guard's */
            for (int k = 0; k < 4; k++) klass[k] &= move.bytes[k];
        Py_DECREF(key);
        Py_DECREF(guarded.tags);
        key = guarded_key(core, &live, &move, &guarded);
        if (!key) {
            Py_DECREF(live);
            goto done;
        }
    }
    long target = intern_live(s, core, live, key, &guarded, (uint8_t *)accepts.buf, accepts.len, limit);
    Py_DECREF(live);
    Py_DECREF(key);
    Py_DECREF(guarded.tags);
    if (target == -2) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    if (target < -1 || (target == -1 && PyErr_Occurred())) goto done;
    /* the whole class at once; the row published once no cell is left to make (a guarded state's
       row is Python's: LexemeDFA._guarded_row) */
    int left = 0;
    for (int b = 0; b < 256; b++) {
        if (has_byte(klass, b) && (!move.next || row[b] == 0)) row[b] = (int32_t)(target + STORED);
        left += row[b] == 0;
    }
    if (!left && !move.next && PyList_GET_ITEM(core[ROWS], state) == Py_None) {
        PyObject *cells = row_tuple(row, STORED);
        if (!cells || PyList_SetItem(core[ROWS], state, cells) < 0) goto done;  /* SetItem steals cells */
    }
    result = PyLong_FromLong(target);
done:
    Py_XDECREF(move.next);
    PyBuffer_Release(&table);
    PyBuffer_Release(&accepts);
    return result;
}

/* Store.make_start(core, key, origins, alive) -> int or None: engine/dfa.py's LexemeDFA.start for
   a set of origins none of which is guarded, in one call. `key` is the set as _set_key writes it
   (sorted, four bytes each, little-endian), `origins` the DFA's list of (expression, guard) per
   origin, `alive` its dict from origin to whether the expression matches anything
   (LexemeDFA._live_origins), read and written here. An origin whose expression may be empty (it
   holds & or ¬ and is not nullable) is decided as step_live decides a derivative: by its
   structure, a word, or the bounded search; where those leave it undecided, the answer is None and
   Python starts the state. Otherwise the live pairs (origin, expression), in the key's order, are
   interned as make_cell interns a cell's (intern_live: looked up in ids, or appended under the
   DFA's lock; None where the state would be at or past the limit). Returns the state, or DEAD
   (-1) where no origin's expression matches anything. */
PyObject *store_make_start(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != CORE_SIZE || !PyBytes_Check(args[1]) ||
        !PyList_Check(args[2]) || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "make_start(core: a tuple of 14, key: bytes, origins: list, alive: dict)");
        return NULL;
    }
    PyObject *const *core = &PyTuple_GET_ITEM(args[0], 0);
    PyObject *origins = args[2], *alive = args[3];
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    if (size % 4) {
        PyErr_SetString(PyExc_ValueError, "make_start: a key is four bytes per origin");
        return NULL;
    }
    long limit = PyLong_AsLong(core[LIMIT]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    const unsigned char *raw = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t count = size / 4, kept = 0;
    PyObject *live = PyTuple_New(count), *result = NULL;
    if (!live) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint32_t origin = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 | (uint32_t)raw[4 * i + 2] << 16 |
                          (uint32_t)raw[4 * i + 3] << 24;
        if ((Py_ssize_t)origin >= PyList_GET_SIZE(origins)) {
            PyErr_SetString(PyExc_IndexError, "make_start: no such origin");
            goto done;
        }
        PyObject *entry = PyList_GET_ITEM(origins, origin);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
            PyErr_SetString(PyExc_TypeError, "make_start: an origin is (expression, guard)");
            goto done;
        }
        if (PyTuple_GET_ITEM(entry, 1) != Py_None) {  /* guarded: Python's */
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
        PyObject *expr = PyTuple_GET_ITEM(entry, 0);
        int32_t e = node_arg(s, expr);
        if (e < 0) goto done;
        PyObject *name = PyLong_FromUnsignedLong(origin);
        if (!name) goto done;
        PyObject *known = PyDict_GetItemWithError(alive, name);  /* borrowed */
        int matches;
        if (known) matches = known == Py_True;
        else if (PyErr_Occurred()) {
            Py_DECREF(name);
            goto done;
        } else {
            int shown = s->mutation == 10 && e != NOTHING ? 1 : emptiness_of(s, e);  /* 10 (tests only): no search */
            if (shown <= 0) {  /* an error, or undecided: Python's search */
                Py_DECREF(name);
                if (shown == 0) {
                    Py_INCREF(Py_None);
                    result = Py_None;
                }
                goto done;
            }
            matches = shown == 1;
            if (PyDict_SetItem(alive, name, matches ? Py_True : Py_False) < 0) {
                Py_DECREF(name);
                goto done;
            }
        }
        if (matches) {
            PyObject *pair = PyTuple_Pack(2, name, expr);
            if (!pair) {
                Py_DECREF(name);
                goto done;
            }
            PyObject_GC_UnTrack(pair);
            PyTuple_SET_ITEM(live, kept++, pair);
        }
        Py_DECREF(name);
    }
    if (_PyTuple_Resize(&live, kept) < 0) return NULL;  /* live is freed on failure */
    if (kept == 0) {
        result = PyLong_FromLong(DEAD);
        goto done;
    }
    PyObject_GC_UnTrack(live);
    Py_buffer accepts;
    if (PyObject_GetBuffer(core[ACCEPTS], &accepts, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto done;
    Guarded none = {-1, 0, core[NO_TAGS]};
    long state = accepts.itemsize != 1 ? -3 : intern_live(s, core, live, live, &none, (uint8_t *)accepts.buf,
                                                            accepts.len, limit);
    PyBuffer_Release(&accepts);
    if (state == -3) PyErr_SetString(PyExc_ValueError, "make_start: accepts is not uint8");
    else if (state == -2) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (state >= 0) result = PyLong_FromLong(state);
done:
    Py_XDECREF(live);
    return result;
}
