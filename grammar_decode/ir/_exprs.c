/* The expression store of ir/regex.py in C: hash-consed nodes, their smart constructors and
   Brzozowski derivatives, over flat arrays.

   Store(*, mutation=0) holds every node of one ExprSet (mutation: tests only, a deliberately
   broken store: 1 keeps ε in a union that is nullable without it, 2 derives r{lo,hi} to
   d(r) r{lo-1,hi}, 3 has step_pairs keep derivatives that may be empty without saying so, 4 has
   make_cell append every new state as matching nothing). A node is an int id, as in the Python store, with the
   same kinds (ir/kinds.py), the same three fixed ids (NOTHING 0, EPSILON 1, ANYTHING 2 = not
   NOTHING) and the same canonical forms: each constructor below follows its namesake in
   regex.py rule for rule, so both stores build structurally equal nodes from equal parts (the
   tests compare them node for node over random expressions and real schemas' lexemes).

   Methods (all return node ids unless said):
     byteset(mask)            one byte out of a 256-bit set (a Python int)
     literal_from(data, s)    the bytes data[s:] (bytes): EPSILON, a byte set, or a LITERAL node
     concat(*items), alt(*items), both(*items), negate(item)
     repeat(item, lo, hi)     hi None: unbounded; bounds are int64 (OverflowError past 2**62; ExprSet clamps first)
     derivative(item, byte)   memoised per (node, byte)
     byte_classes(item)       a tuple of 256-bit ints: the bytes in classes with equal
                              derivatives (the leaves at first positions), by least byte
     first_bytes(item)        a 256-bit Python int: a superset of the bytes with a non-empty
                              derivative (exact without NOT), computed when the node is made
     has_boolean(item), has_unbounded_repeat(item)
     step_pairs(pairs, byte)  a lexer transition over (origin, expr) pairs: the live derivatives,
                              and the bytes that share them
     make_cell(core, state, byte)  a lexer transition made, interned and written (ir/_cells.c)
     make_start(core, key, origins, alive)  a lexer start state made and interned (ir/_cells.c)
     decide(item), witnessed(item), use_decided(memo)  emptiness of intersections (ir/_empty.c)
   Module function fill_class(table, offset, klass, value): one byte class of a dense-table row.
   Attributes kinds, nullables, args: read-only sequences over the nodes, as the Python store's
   lists kind, nullable and args (args built on access: None, an int mask, (data, start), a tuple
   of ids, an id, or (item, lo, hi)).

   Cost: a constructor whose node exists is one hash probe; a new node is an append; a memoised
   derivative is one probe. Every call runs with the GIL held and calls back into no Python code,
   so one Store is safe to share between threads as the Python store is. */

#include "_exprs.h"

PyTypeObject StoreType;
static PyObject *ZERO, *LIMIT; /* 0 and 2**256: the bounds of a byte set */

/* ---- small helpers --------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

static int cmp_ids(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Sorted, each once. */
static void ids_sort_unique(Ids *b) {
    if (b->n < 2) return;
    qsort(b->items, (size_t)b->n, sizeof(int32_t), cmp_ids);
    Py_ssize_t w = 1;
    for (Py_ssize_t r = 1; r < b->n; r++)
        if (b->items[r] != b->items[w - 1]) b->items[w++] = b->items[r];
    b->n = w;
}

/* The children of node x copied out (the pool may move while they are used). */
static int children_of(Store *s, int32_t x, Ids *out) {
    const Node *node = &s->nodes[x];
    int64_t offset = node->a, count = node->b;
    for (int64_t i = 0; i < count; i++)
        if (ids_push(out, s->pool[offset + i]) < 0) return -1;
    return 0;
}

/* ---- the hash-consing index ------------------------------------------------------------------ */

static uint64_t node_hash(Store *s, int kind, int64_t a, int64_t b, int64_t c, const int32_t *items,
                          Py_ssize_t count, const uint64_t mask[4], PyObject *lit, int *error) {
    uint64_t h = mix(0x51ED27, (uint64_t)kind);
    switch (kind) {
    case BYTES_KIND:
        for (int i = 0; i < 4; i++) h = mix(h, mask[i]);
        break;
    case LITERAL_KIND: {
        Py_hash_t lh = PyObject_Hash(lit);
        if (lh == -1) { *error = 1; return 0; }
        h = mix(mix(h, (uint64_t)lh), (uint64_t)b);
        break;
    }
    case CONCAT_KIND: case OR_KIND: case AND_KIND:
        h = mix(h, (uint64_t)count);
        for (Py_ssize_t i = 0; i < count; i++) h = mix(h, (uint64_t)items[i]);
        break;
    case NOT_KIND:
        h = mix(h, (uint64_t)a);
        break;
    case REPEAT_KIND:
        h = mix(mix(mix(h, (uint64_t)a), (uint64_t)b), (uint64_t)c);
        break;
    }
    (void)s;
    return h;
}

static int node_equals(Store *s, int32_t id, int kind, int64_t a, int64_t b, int64_t c, const int32_t *items,
                       Py_ssize_t count, const uint64_t mask[4], PyObject *lit) {
    const Node *node = &s->nodes[id];
    if (node->kind != kind) return 0;
    switch (kind) {
    case NOTHING_KIND: case EPSILON_KIND:
        return 1;
    case BYTES_KIND:
        return memcmp(node->first, mask, sizeof(node->first)) == 0;
    case LITERAL_KIND: {
        if (node->b != b) return 0;
        PyObject *mine = s->lits[node->a];
        if (mine == lit) return 1;
        Py_ssize_t len = PyBytes_GET_SIZE(mine);
        return len == PyBytes_GET_SIZE(lit) && memcmp(PyBytes_AS_STRING(mine), PyBytes_AS_STRING(lit), (size_t)len) == 0;
    }
    case CONCAT_KIND: case OR_KIND: case AND_KIND:
        return node->b == count && memcmp(s->pool + node->a, items, (size_t)count * sizeof(int32_t)) == 0;
    case NOT_KIND:
        return node->a == a;
    default: /* REPEAT */
        return node->a == a && node->b == b && node->c == c;
    }
}

/* ---- Tables that grow without a pause -------------------------------------------------------

   The node index and the derivative memo are open-addressing tables kept at most half full. A
   table that doubled by rehashing every entry at once stalled the call that crossed the threshold
   for as long as the table was large: 146 ms for one mask, late in a long run, where the memo held
   millions of derivatives. So a growth only allocates the new table (calloc: zero is the empty
   slot, and the OS hands out zero pages as they are first written, so no memset either) and keeps
   the old one; every insertion then moves MIGRATE_STEP of the old table's slots over, and a lookup
   that misses in the new table probes the old one. The new table holds twice the old capacity and
   crosses its own threshold only after (old capacity / 2) more insertions, by when all
   (old capacity / MIGRATE_STEP) of the moving insertions are long done; a growth that found a move
   still under way would finish it first. Entries are never removed, so no tombstones. */

#define MIGRATE_STEP 8

static void index_place(int32_t *table, int64_t cap, const Node *nodes, int32_t id) {
    uint64_t slot = nodes[id].hash & (uint64_t)(cap - 1);
    while (table[slot]) slot = (slot + 1) & (uint64_t)(cap - 1);
    table[slot] = id + 1;
}

/* Moves up to `slots` slots of the old index into the new one (all of them: INT64_MAX). */
static void index_migrate(Store *s, int64_t slots) {
    while (s->old_index && slots-- > 0) {
        int32_t entry = s->old_index[s->old_index_pos++];
        if (entry) index_place(s->index, s->index_cap, s->nodes, entry - 1);
        if (s->old_index_pos == s->old_index_cap) {
            free(s->old_index);
            s->old_index = NULL;
            s->old_index_cap = s->old_index_pos = 0;
        }
    }
}

static int index_grow(Store *s) {
    index_migrate(s, INT64_MAX);
    int64_t cap = s->index_cap ? 2 * s->index_cap : 1024;
    int32_t *table = calloc((size_t)cap, sizeof(int32_t));
    if (!table) { PyErr_NoMemory(); return -1; }
    if (s->index) {
        s->old_index = s->index;
        s->old_index_cap = s->index_cap;
        s->old_index_pos = 0;
    }
    s->index = table;
    s->index_cap = cap;
    return 0;
}

/* The node with hash `h` equal to (kind, args) in `table`, or -1; `*empty` (when not NULL): the
   empty slot where the probe ended. */
static int32_t index_probe(Store *s, const int32_t *table, int64_t cap, uint64_t h, int kind, int64_t a, int64_t b,
                           int64_t c, const int32_t *items, Py_ssize_t count, const uint64_t mask[4], PyObject *lit,
                           uint64_t *empty) {
    uint64_t slot = h & (uint64_t)(cap - 1);
    for (;;) {
        int32_t entry = table[slot];
        if (!entry) break;
        int32_t id = entry - 1;
        if (s->nodes[id].hash == h && node_equals(s, id, kind, a, b, c, items, count, mask, lit)) return id;
        slot = (slot + 1) & (uint64_t)(cap - 1);
    }
    if (empty) *empty = slot;
    return -1;
}

static void bits_or(uint64_t out[4], const uint64_t in[4]) { for (int i = 0; i < 4; i++) out[i] |= in[i]; }

/* The node (kind, args): found in the index, or appended. `nullable` is the caller's, as in
   regex.py (equal keys always come with equal nullability). -1 on error. */
static int32_t intern(Store *s, int kind, int nullable, int64_t a, int64_t b, int64_t c, const int32_t *items,
                      Py_ssize_t count, const uint64_t mask[4], PyObject *lit) {
    int error = 0;
    uint64_t h = node_hash(s, kind, a, b, c, items, count, mask, lit, &error);
    if (error) return -1;
    if (2 * (int64_t)(s->n + 1) > s->index_cap && index_grow(s) < 0) return -1;
    uint64_t slot = 0;
    int32_t found = index_probe(s, s->index, s->index_cap, h, kind, a, b, c, items, count, mask, lit, &slot);
    if (found < 0 && s->old_index && s->mutation != 5)
        found = index_probe(s, s->old_index, s->old_index_cap, h, kind, a, b, c, items, count, mask, lit, NULL);
    if (found >= 0) return found;
    if (s->n == INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many expression nodes"); return -1; }
    if (s->n == s->cap) {
        int32_t cap = s->cap ? (s->cap > INT32_MAX / 2 ? INT32_MAX : 2 * s->cap) : 1024;
        Node *grown = realloc(s->nodes, (size_t)cap * sizeof(Node));
        if (!grown) { PyErr_NoMemory(); return -1; }
        s->nodes = grown;
        s->cap = cap;
    }
    Node node;
    memset(&node, 0, sizeof(node));
    node.kind = (uint8_t)kind;
    node.nullable = (uint8_t)(nullable != 0);
    node.hash = h;
    node.b = b;
    node.c = c;
    switch (kind) {
    case BYTES_KIND:
        memcpy(node.first, mask, sizeof(node.first));
        break;
    case LITERAL_KIND: {
        if (s->nlits == s->caplits) {
            int32_t cap = s->caplits ? 2 * s->caplits : 64;
            PyObject **grown = realloc(s->lits, (size_t)cap * sizeof(PyObject *));
            if (!grown) { PyErr_NoMemory(); return -1; }
            s->lits = grown;
            s->caplits = cap;
        }
        Py_INCREF(lit);
        s->lits[s->nlits] = lit;
        node.a = s->nlits++;
        int byte = (unsigned char)PyBytes_AS_STRING(lit)[b];
        node.first[byte >> 6] = (uint64_t)1 << (byte & 63);
        break;
    }
    case CONCAT_KIND: case OR_KIND: case AND_KIND: {
        if (s->npool + count > s->cappool) {
            int64_t cap = s->cappool ? 2 * s->cappool : 4096;
            while (cap < s->npool + count) cap *= 2;
            int32_t *grown = realloc(s->pool, (size_t)cap * sizeof(int32_t));
            if (!grown) { PyErr_NoMemory(); return -1; }
            s->pool = grown;
            s->cappool = cap;
        }
        memcpy(s->pool + s->npool, items, (size_t)count * sizeof(int32_t));
        node.a = s->npool;
        node.b = count;
        s->npool += count;
        if (kind == AND_KIND) memset(node.first, 0xff, sizeof(node.first));
        int through = 1;  /* CONCAT: the first bytes up to the first member that cannot be empty */
        for (Py_ssize_t i = 0; i < count; i++) {
            const Node *child = &s->nodes[items[i]];
            node.flags |= child->flags;
            if (kind == AND_KIND) {
                for (int w = 0; w < 4; w++) node.first[w] &= child->first[w];
            } else if (kind == OR_KIND || through) {
                bits_or(node.first, child->first);
                through &= child->nullable;
            }
        }
        if (kind == AND_KIND) node.flags |= HAS_BOOLEAN;
        break;
    }
    case NOT_KIND:
        node.a = a;
        memset(node.first, 0xff, sizeof(node.first));
        node.flags = s->nodes[a].flags | HAS_BOOLEAN;
        break;
    case REPEAT_KIND:
        node.a = a;
        memcpy(node.first, s->nodes[a].first, sizeof(node.first));
        node.flags = s->nodes[a].flags | (c < 0 ? HAS_UNBOUNDED : 0);
        break;
    }
    int32_t id = s->n++;
    s->nodes[id] = node;
    s->index[slot] = id + 1;
    index_migrate(s, MIGRATE_STEP);
    return id;
}

/* Whether every (all = 1) or some (all = 0) of the nodes `items` matches the empty string. */
static int nullable_of(Store *s, const int32_t *items, Py_ssize_t count, int all) {
    for (Py_ssize_t i = 0; i < count; i++)
        if (s->nodes[items[i]].nullable != all) return !all;
    return all;
}

/* ---- constructors (regex.py: byteset, _literal_from, concat, alt, both, negate, repeat) ------- */

static int32_t mk_bytes(Store *s, const uint64_t mask[4]) {
    if (is_zero(mask)) return NOTHING;
    return intern(s, BYTES_KIND, 0, 0, 0, 0, NULL, 0, mask, NULL);
}

static int32_t mk_literal(Store *s, PyObject *data, int64_t start) {
    int64_t left = PyBytes_GET_SIZE(data) - start;
    if (left == 0) return EPSILON;
    if (left == 1) {
        uint64_t mask[4] = {0, 0, 0, 0};
        int byte = (unsigned char)PyBytes_AS_STRING(data)[start];
        mask[byte >> 6] = (uint64_t)1 << (byte & 63);
        return mk_bytes(s, mask);
    }
    return intern(s, LITERAL_KIND, 0, 0, start, 0, NULL, 0, NULL, data);
}

static int32_t mk_concat(Store *s, const int32_t *items, Py_ssize_t count) {
    Ids flat;
    ids_init(&flat);
    int32_t result = -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t item = items[i];
        int kind = s->nodes[item].kind;
        if (kind == NOTHING_KIND) { result = NOTHING; goto done; }
        if (kind == EPSILON_KIND) continue;
        if (kind == CONCAT_KIND) {
            if (children_of(s, item, &flat) < 0) goto done;
        } else if (ids_push(&flat, item) < 0) {
            goto done;
        }
    }
    if (flat.n == 0) { result = EPSILON; goto done; }
    if (flat.n == 1) { result = flat.items[0]; goto done; }
    result = intern(s, CONCAT_KIND, nullable_of(s, flat.items, flat.n, 1), 0, 0, 0, flat.items, flat.n, NULL, NULL);
done:
    ids_free(&flat);
    return result;
}

static int32_t mk_alt(Store *s, const int32_t *items, Py_ssize_t count) {
    Ids members;
    ids_init(&members);
    uint64_t mask[4] = {0, 0, 0, 0};
    int32_t result = -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t item = items[i];
        const Node *node = &s->nodes[item];
        if (node->kind == OR_KIND) {
            for (int64_t j = 0; j < node->b; j++) {
                int32_t inner = s->pool[node->a + j];
                if (s->nodes[inner].kind == BYTES_KIND) bits_or(mask, s->nodes[inner].first);
                else if (ids_push(&members, inner) < 0) goto done;
            }
        } else if (node->kind == BYTES_KIND) {
            bits_or(mask, node->first);
        } else if (node->kind != NOTHING_KIND) {
            if (ids_push(&members, item) < 0) goto done;
        }
    }
    for (Py_ssize_t i = 0; i < members.n; i++)
        if (members.items[i] == ANYTHING) { result = ANYTHING; goto done; }
    if (!is_zero(mask)) {
        int32_t bytes = mk_bytes(s, mask);
        if (bytes < 0 || ids_push(&members, bytes) < 0) goto done;
    }
    ids_sort_unique(&members);
    /* ε adds nothing to a union that is already nullable */
    if (members.n && members.items[0] == EPSILON) {
        if (nullable_of(s, members.items + 1, members.n - 1, 0) && s->mutation != 1) {
            memmove(members.items, members.items + 1, (size_t)(members.n - 1) * sizeof(int32_t));
            members.n--;
        }
    }
    if (members.n == 0) { result = NOTHING; goto done; }
    if (members.n == 1) { result = members.items[0]; goto done; }
    result = intern(s, OR_KIND, nullable_of(s, members.items, members.n, 0), 0, 0, 0, members.items, members.n, NULL,
                    NULL);
done:
    ids_free(&members);
    return result;
}

static int32_t mk_both(Store *s, const int32_t *items, Py_ssize_t count) {
    Ids members;
    ids_init(&members);
    int32_t result = -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t item = items[i];
        int kind = s->nodes[item].kind;
        if (kind == NOTHING_KIND) { result = NOTHING; goto done; }
        if (kind == AND_KIND) {
            if (children_of(s, item, &members) < 0) goto done;
        } else if (item != ANYTHING && ids_push(&members, item) < 0) {
            goto done;
        }
    }
    if (members.n == 0) { result = ANYTHING; goto done; }
    ids_sort_unique(&members);
    int all_bytes = 1;
    for (Py_ssize_t i = 0; i < members.n && all_bytes; i++) all_bytes = s->nodes[members.items[i]].kind == BYTES_KIND;
    if (all_bytes) {
        uint64_t mask[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
        for (Py_ssize_t i = 0; i < members.n; i++)
            for (int w = 0; w < 4; w++) mask[w] &= s->nodes[members.items[i]].first[w];
        result = mk_bytes(s, mask);
        goto done;
    }
    if (members.n == 1) { result = members.items[0]; goto done; }
    /* a member and its complement: nothing (regex.py's both, the same rule) */
    for (Py_ssize_t i = 0; i < members.n; i++) {
        const Node *m = &s->nodes[members.items[i]];
        if (m->kind != NOT_KIND) continue;
        for (Py_ssize_t j = 0; j < members.n; j++)
            if (members.items[j] == (int32_t)m->a) { result = NOTHING; goto done; }
    }
    result = intern(s, AND_KIND, nullable_of(s, members.items, members.n, 1), 0, 0, 0, members.items, members.n, NULL,
                    NULL);
done:
    ids_free(&members);
    return result;
}

static int32_t mk_not(Store *s, int32_t item) {
    if (s->nodes[item].kind == NOT_KIND) return (int32_t)s->nodes[item].a;
    return intern(s, NOT_KIND, !s->nodes[item].nullable, item, 0, 0, NULL, 0, NULL, NULL);
}

static int32_t mk_repeat(Store *s, int32_t item, int64_t lo, int64_t hi) {
    if (lo < 0 || (hi >= 0 && hi < lo)) {
        PyErr_SetString(PyExc_ValueError, "bad repetition bounds");
        return -1;
    }
    if (hi == 0 || item == EPSILON) return EPSILON;
    if (item == NOTHING) return lo == 0 ? EPSILON : NOTHING;
    if (s->nodes[item].nullable) lo = 0;  /* r{lo,hi} = r{0,hi} when r matches the empty string */
    if (lo == 1 && hi == 1) return item;
    const Node *node = &s->nodes[item];
    if (node->kind == REPEAT_KIND) {
        int64_t ilo = node->b, ihi = node->c;
        /* (r*)* = r*, (r*){lo,hi} = r*, (r+)* = r*: the common unbounded cases only */
        if (ihi < 0 && ilo <= 1 && (lo == 0 || ilo == 0))
            return intern(s, REPEAT_KIND, 1, node->a, 0, -1, NULL, 0, NULL, NULL);
    }
    return intern(s, REPEAT_KIND, lo == 0 || s->nodes[item].nullable, item, lo, hi, NULL, 0, NULL, NULL);
}

/* ---- derivatives ----------------------------------------------------------------------------- */

/* The memo grows as the index does (see "Tables that grow without a pause"): keys stored plus
   one, zero the empty slot. */
static void memo_place(int64_t *keys, int32_t *vals, int64_t cap, int64_t stored, int32_t value) {
    uint64_t slot = mix(0, (uint64_t)stored) & (uint64_t)(cap - 1);
    while (keys[slot] && keys[slot] != stored) slot = (slot + 1) & (uint64_t)(cap - 1);
    keys[slot] = stored;
    vals[slot] = value;
}

static void memo_migrate(Store *s, int64_t slots) {
    while (s->old_dkeys && slots-- > 0) {
        int64_t i = s->old_dpos++;
        if (s->old_dkeys[i]) memo_place(s->dkeys, s->dvals, s->dcap, s->old_dkeys[i], s->old_dvals[i]);
        if (s->old_dpos == s->old_dcap) {
            free(s->old_dkeys);
            free(s->old_dvals);
            s->old_dkeys = NULL;
            s->old_dvals = NULL;
            s->old_dcap = s->old_dpos = 0;
        }
    }
}

static int memo_grow(Store *s) {
    memo_migrate(s, INT64_MAX);
    int64_t cap = s->dcap ? 2 * s->dcap : 4096;
    int64_t *keys = calloc((size_t)cap, sizeof(int64_t));
    int32_t *vals = malloc((size_t)cap * sizeof(int32_t));  /* read only where a key is */
    if (!keys || !vals) { free(keys); free(vals); PyErr_NoMemory(); return -1; }
    if (s->dkeys) {
        s->old_dkeys = s->dkeys;
        s->old_dvals = s->dvals;
        s->old_dcap = s->dcap;
        s->old_dpos = 0;
    }
    s->dkeys = keys;
    s->dvals = vals;
    s->dcap = cap;
    return 0;
}

static int32_t memo_probe(const int64_t *keys, const int32_t *vals, int64_t cap, int64_t stored) {
    uint64_t slot = mix(0, (uint64_t)stored) & (uint64_t)(cap - 1);
    for (;;) {
        int64_t found = keys[slot];
        if (found == stored) return vals[slot];
        if (!found) return -1;
        slot = (slot + 1) & (uint64_t)(cap - 1);
    }
}

static int32_t memo_get(Store *s, int64_t key) {
    if (!s->dcap) return -1;
    int32_t found = memo_probe(s->dkeys, s->dvals, s->dcap, key + 1);
    if (found < 0 && s->old_dkeys) found = memo_probe(s->old_dkeys, s->old_dvals, s->old_dcap, key + 1);
    return found;
}

/* Records a derivative memo_get did not find (in either table). */
static int memo_put(Store *s, int64_t key, int32_t value) {
    if (2 * (s->dcount + 1) > s->dcap && memo_grow(s) < 0) return -1;
    memo_place(s->dkeys, s->dvals, s->dcap, key + 1, value);
    s->dcount++;
    memo_migrate(s, MIGRATE_STEP);
    return 0;
}


static int32_t derive_new(Store *s, int32_t item, int byte) {
    const Node *node = &s->nodes[item];
    switch (node->kind) {
    case BYTES_KIND:
        return has_byte(node->first, byte) ? EPSILON : NOTHING;
    case NOTHING_KIND: case EPSILON_KIND:
        return NOTHING;
    case LITERAL_KIND: {
        PyObject *data = s->lits[node->a];
        int64_t start = node->b;
        return (unsigned char)PyBytes_AS_STRING(data)[start] == byte ? mk_literal(s, data, start + 1) : NOTHING;
    }
    case CONCAT_KIND: {
        Ids parts;
        ids_init(&parts);
        int32_t result = -1;
        if (children_of(s, item, &parts) < 0) goto concat_done;
        int32_t head = parts.items[0];
        int32_t derived = derive(s, head, byte);
        if (derived < 0) goto concat_done;
        int head_nullable = s->nodes[head].nullable;
        if (derived == NOTHING && !head_nullable) { result = NOTHING; goto concat_done; }
        int32_t tail = mk_concat(s, parts.items + 1, parts.n - 1);
        if (tail < 0) goto concat_done;
        int32_t pair[2] = {derived, tail};
        int32_t first = mk_concat(s, pair, 2);
        if (first < 0 || !head_nullable) { result = first; goto concat_done; }
        int32_t rest = derive(s, tail, byte);
        if (rest < 0) goto concat_done;
        int32_t options[2] = {first, rest};
        result = mk_alt(s, options, 2);
    concat_done:
        ids_free(&parts);
        return result;
    }
    case OR_KIND: case AND_KIND: {
        int kind = node->kind;
        Ids members, derived;
        ids_init(&members);
        ids_init(&derived);
        int32_t result = -1;
        if (children_of(s, item, &members) < 0) goto members_done;
        for (Py_ssize_t i = 0; i < members.n; i++) {
            int32_t m = members.items[i];
            /* members that cannot begin with the byte derive to ∅: skipped in a union */
            if (kind == OR_KIND && !has_byte(s->nodes[m].first, byte)) continue;
            int32_t d = derive(s, m, byte);
            if (d < 0 || ids_push(&derived, d) < 0) goto members_done;
        }
        result = kind == OR_KIND ? mk_alt(s, derived.items, derived.n) : mk_both(s, derived.items, derived.n);
    members_done:
        ids_free(&members);
        ids_free(&derived);
        return result;
    }
    case NOT_KIND: {
        int32_t d = derive(s, (int32_t)node->a, byte);
        return d < 0 ? -1 : mk_not(s, d);
    }
    default: { /* REPEAT */
        int32_t inner = (int32_t)node->a;
        int64_t lo = node->b, hi = node->c;
        int32_t rest = mk_repeat(s, inner, lo > 0 ? lo - 1 : 0, hi < 0 ? -1 : hi - (s->mutation != 2));
        if (rest < 0) return -1;
        int32_t d = derive(s, inner, byte);
        if (d < 0) return -1;
        int32_t pair[2] = {d, rest};
        return mk_concat(s, pair, 2);
    }
    }
}

int32_t derive(Store *s, int32_t item, int byte) {
    int64_t key = (int64_t)item * 256 + byte;
    int32_t found = memo_get(s, key);
    if (found >= 0) return found;
    found = derive_new(s, item, byte);
    if (found >= 0 && memo_put(s, key, found) < 0) return -1;
    return found;
}

/* ---- Python conversions ---------------------------------------------------------------------- */

PyObject *mask_to_int(const uint64_t mask[4]) {
    unsigned char buf[32];
    for (int w = 0; w < 4; w++)
        for (int i = 0; i < 8; i++) buf[8 * w + i] = (unsigned char)(mask[w] >> (8 * i));
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(buf, 32, Py_ASNATIVEBYTES_LITTLE_ENDIAN);
#else
    return _PyLong_FromByteArray(buf, 32, 1, 0);
#endif
}

/* A Python int 0 <= v < 2**256 as four words; -1 with ValueError outside that range. */
static int int_to_mask(PyObject *value, uint64_t mask[4]) {
    if (!PyLong_Check(value)) { PyErr_SetString(PyExc_TypeError, "a byte set is an int"); return -1; }
    int negative = PyObject_RichCompareBool(value, ZERO, Py_LT);
    int above = negative ? 0 : PyObject_RichCompareBool(value, LIMIT, Py_GE);
    if (negative < 0 || above < 0) return -1;
    if (negative || above) {
        PyErr_SetString(PyExc_ValueError, "a byte set is a 256-bit non-negative integer");
        return -1;
    }
    unsigned char buf[32];
#if PY_VERSION_HEX >= 0x030D0000
    if (PyLong_AsNativeBytes(value, buf, 32, Py_ASNATIVEBYTES_LITTLE_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER) < 0)
        return -1;
#else
    if (_PyLong_AsByteArray((PyLongObject *)value, buf, 32, 1, 0) < 0) return -1;
#endif
    for (int w = 0; w < 4; w++) {
        mask[w] = 0;
        for (int i = 0; i < 8; i++) mask[w] |= (uint64_t)buf[8 * w + i] << (8 * i);
    }
    return 0;
}

int32_t node_arg(Store *s, PyObject *value) {
    long id = PyLong_AsLong(value);
    if (id == -1 && PyErr_Occurred()) return -1;
    if (id < 0 || id >= s->n) { PyErr_Format(PyExc_IndexError, "no expression node %ld", id); return -1; }
    return (int32_t)id;
}

/* A repetition bound: 0 and *out set, or -1 with an exception (negative bounds are ValueError). */
static int bound_arg(PyObject *value, int64_t *out) {
    int overflow = 0;
    long long bound = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (bound == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || bound < 0) { PyErr_SetString(PyExc_ValueError, "bad repetition bounds"); return -1; }
    if (overflow || bound > MAX_BOUND) {
        PyErr_SetString(PyExc_OverflowError, "a repetition bound past 2**62");
        return -1;
    }
    *out = (int64_t)bound;
    return 0;
}

static PyObject *id_result(int32_t id) { return id < 0 ? NULL : PyLong_FromLong(id); }

/* ---- methods --------------------------------------------------------------------------------- */

static PyObject *store_byteset(Store *s, PyObject *value) {
    uint64_t mask[4];
    if (int_to_mask(value, mask) < 0) return NULL;
    return id_result(mk_bytes(s, mask));
}

static PyObject *store_literal_from(Store *s, PyObject *args) {
    PyObject *data;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!n", &PyBytes_Type, &data, &start)) return NULL;
    if (start < 0 || start > PyBytes_GET_SIZE(data)) { PyErr_SetString(PyExc_ValueError, "start out of range"); return NULL; }
    return id_result(mk_literal(s, data, start));
}

typedef int32_t (*Combine)(Store *, const int32_t *, Py_ssize_t);

static PyObject *combine(Store *s, PyObject *const *args, Py_ssize_t nargs, Combine how) {
    Ids items;
    ids_init(&items);
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        int32_t id = node_arg(s, args[i]);
        if (id < 0 || ids_push(&items, id) < 0) goto done;
    }
    result = id_result(how(s, items.items, items.n));
done:
    ids_free(&items);
    return result;
}

static PyObject *store_concat(Store *s, PyObject *const *args, Py_ssize_t nargs) { return combine(s, args, nargs, mk_concat); }
static PyObject *store_alt(Store *s, PyObject *const *args, Py_ssize_t nargs) { return combine(s, args, nargs, mk_alt); }
static PyObject *store_both(Store *s, PyObject *const *args, Py_ssize_t nargs) { return combine(s, args, nargs, mk_both); }

static PyObject *store_negate(Store *s, PyObject *value) {
    int32_t id = node_arg(s, value);
    return id < 0 ? NULL : id_result(mk_not(s, id));
}

static PyObject *store_repeat(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "repeat(item, lo, hi)"); return NULL; }
    int32_t id = node_arg(s, args[0]);
    if (id < 0) return NULL;
    int64_t lo, hi = -1;
    if (bound_arg(args[1], &lo) < 0 || (args[2] != Py_None && bound_arg(args[2], &hi) < 0)) return NULL;
    return id_result(mk_repeat(s, id, lo, hi));
}

static PyObject *store_derivative(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "derivative(item, byte)"); return NULL; }
    int32_t id = node_arg(s, args[0]);
    if (id < 0) return NULL;
    long byte = PyLong_AsLong(args[1]);
    if (byte == -1 && PyErr_Occurred()) return NULL;
    if (byte < 0 || byte > 255) { PyErr_SetString(PyExc_ValueError, "a byte is 0..255"); return NULL; }
    return id_result(derive(s, id, (int)byte));
}

static PyObject *store_first_bytes(Store *s, PyObject *value) {
    int32_t id = node_arg(s, value);
    return id < 0 ? NULL : mask_to_int(s->nodes[id].first);
}

/* The bytes of `item` in classes with equal derivatives, each class the bytes class_of puts with
   its least byte (the leaves a derivative inspects: first positions only), in order of least
   byte. Coarser than the partition along every leaf under the node (ExprSet.split_sets), which a
   node holding hundreds of names splits into a class per letter at every depth. */
static PyObject *store_byte_classes(Store *s, PyObject *value) {
    int32_t id = node_arg(s, value);
    if (id < 0) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    uint64_t left[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
    for (int w = 0; w < 4;) {
        if (!left[w]) { w++; continue; }
        int byte = 64 * w + __builtin_ctzll(left[w]);
        uint64_t klass[4];
        if (class_of(s, &id, 1, byte, klass) < 0) { Py_DECREF(out); return NULL; }
        for (int v = 0; v < 4; v++) {
            klass[v] &= left[v];  /* a class is a block of one partition: within what is left */
            left[v] &= ~klass[v];
        }
        PyObject *mask = mask_to_int(klass);
        if (!mask || PyList_Append(out, mask) < 0) { Py_XDECREF(mask); Py_DECREF(out); return NULL; }
        Py_DECREF(mask);
    }
    PyObject *result = PyList_AsTuple(out);
    Py_DECREF(out);
    /* ints only: untracked by the cyclic collector now, as a collection would do, so that the
       memo dict holding it (ExprSet._classes) is not tracked again at each insert and walked by
       every full collection */
    if (result) PyObject_GC_UnTrack(result);
    return result;
}

static PyObject *store_has_boolean(Store *s, PyObject *value) {
    int32_t id = node_arg(s, value);
    if (id < 0) return NULL;
    return PyBool_FromLong(s->nodes[id].flags & HAS_BOOLEAN);
}

static PyObject *store_has_unbounded_repeat(Store *s, PyObject *value) {
    int32_t id = node_arg(s, value);
    if (id < 0) return NULL;
    return PyBool_FromLong(s->nodes[id].flags & HAS_UNBOUNDED);
}

static PyObject *store_memo_size(Store *s, PyObject *unused) {
    (void)unused;
    return PyLong_FromLongLong(s->dcount);
}

static PyObject *store_nbytes(Store *s, PyObject *unused) {
    (void)unused;
    int64_t total = (int64_t)s->cap * (int64_t)sizeof(Node) + s->cappool * 4 + (s->index_cap + s->old_index_cap) * 4 + (s->dcap + s->old_dcap) * 12 +
                    (int64_t)s->caplits * (int64_t)sizeof(PyObject *);
    return PyLong_FromLongLong(total);
}


/* ---- one byte class of a set of expressions -------------------------------------------------- */

/* The bytes that no leaf a derivative of `items` inspects tells apart from `byte`: the leaves under
   each item, through concatenations only as far as their first member that cannot be empty (a
   derivative looks no further), a literal by its next byte. Such bytes have equal derivatives:
   derive() makes the same calls for each. Each node is visited once per call (epoch marks). */
int class_of(Store *s, const int32_t *items, Py_ssize_t count, int byte, uint64_t klass[4]) {
    if (s->capmarks < s->n) {
        uint32_t *grown = realloc(s->marks, (size_t)s->cap * sizeof(uint32_t));
        if (!grown) { PyErr_NoMemory(); return -1; }
        memset(grown + s->capmarks, 0, (size_t)(s->cap - s->capmarks) * sizeof(uint32_t));
        s->marks = grown;
        s->capmarks = s->cap;
    }
    if (++s->epoch == 0) {  /* wrapped: clear every mark once */
        memset(s->marks, 0, (size_t)s->capmarks * sizeof(uint32_t));
        s->epoch = 1;
    }
    uint32_t epoch = s->epoch;
    for (int w = 0; w < 4; w++) klass[w] = ~0ULL;
    Ids stack;
    ids_init(&stack);
    for (Py_ssize_t i = 0; i < count; i++)
        if (ids_push(&stack, items[i]) < 0) { ids_free(&stack); return -1; }
    while (stack.n) {
        int32_t x = stack.items[--stack.n];
        if (s->marks[x] == epoch) continue;
        s->marks[x] = epoch;
        const Node *node = &s->nodes[x];
        int pushed = 0;
        switch (node->kind) {
        case BYTES_KIND: case LITERAL_KIND: {
            uint64_t leaf[4] = {0, 0, 0, 0};
            if (node->kind == BYTES_KIND) memcpy(leaf, node->first, sizeof(leaf));
            else { int b = (unsigned char)PyBytes_AS_STRING(s->lits[node->a])[node->b]; leaf[b >> 6] = (uint64_t)1 << (b & 63); }
            int inside = has_byte(leaf, byte);
            for (int w = 0; w < 4; w++) klass[w] &= inside ? leaf[w] : ~leaf[w];
            break;
        }
        case CONCAT_KIND:
            for (int64_t j = 0; j < node->b; j++) {
                int32_t child = s->pool[node->a + j];
                if (ids_push(&stack, child) < 0) pushed = -1;
                if (pushed < 0 || !s->nodes[child].nullable) break;
            }
            break;
        case OR_KIND: case AND_KIND:
            for (int64_t j = 0; j < node->b && pushed == 0; j++) pushed = ids_push(&stack, s->pool[node->a + j]);
            break;
        case NOT_KIND: case REPEAT_KIND:
            pushed = ids_push(&stack, (int32_t)node->a);
            break;
        }
        if (pushed < 0) { ids_free(&stack); return -1; }
    }
    ids_free(&stack);
    return 0;
}

/* The live pairs of one transition (store_step_pairs): a new tuple, the class in klass, the
   positions in it of the derivatives that may be empty in unsure (initialised by the caller);
   NULL with an exception set on error. */
PyObject *step_live(Store *s, PyObject *pairs, int byte, uint64_t klass[4], Ids *unsure) {
    if (!PyTuple_Check(pairs)) { PyErr_SetString(PyExc_TypeError, "the pairs are a tuple"); return NULL; }
    Py_ssize_t count = PyTuple_GET_SIZE(pairs);
    Ids items;
    ids_init(&items);
    PyObject *live = NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "each pair is a tuple (origin, expr)");
            goto done;
        }
        int32_t id = node_arg(s, PyTuple_GET_ITEM(pair, 1));
        if (id < 0 || ids_push(&items, id) < 0) goto done;
    }
    if (class_of(s, items.items, items.n, byte, klass) < 0) goto done;
    live = PyTuple_New(count);
    if (!live) goto done;
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t e = items.items[i];
        int32_t d = has_byte(s->nodes[e].first, byte) ? derive(s, e, byte) : NOTHING;
        if (d < 0) { Py_CLEAR(live); goto done; }
        if (d == NOTHING) continue;
        PyObject *pair = PyTuple_GET_ITEM(pairs, i), *out;
        if (d == e) {
            Py_INCREF(pair);
            out = pair;
        } else {
            PyObject *value = PyLong_FromLong(d);
            out = value ? PyTuple_Pack(2, PyTuple_GET_ITEM(pair, 0), value) : NULL;
            Py_XDECREF(value);
            if (!out) { Py_CLEAR(live); goto done; }
            PyObject_GC_UnTrack(out);  /* two ints: in no cycle (and no visit by a young collection) */
        }
        int shown = s->mutation == 3 ? 1 : emptiness_of(s, d);  /* 3: never reported as may be empty */
        if (shown == 2) {  /* empty: the pair dies */
            Py_DECREF(out);
            continue;
        }
        if (shown < 0 || (!shown && ids_push(unsure, (int32_t)kept) < 0)) {  /* undecided: Python's search */
            Py_DECREF(out);
            Py_CLEAR(live);
            goto done;
        }
        PyTuple_SET_ITEM(live, kept++, out);
    }
    if (_PyTuple_Resize(&live, kept) < 0) live = NULL;
    /* pairs of ints only: in no cycle (a state's pairs are kept for good, and each new state's
       were one more tuple for the next young collection to visit) */
    else if (kept) PyObject_GC_UnTrack(live);
done:
    ids_free(&items);
    return live;
}

/* step_pairs(pairs, byte) -> (live, klass, unsure): one lexer transition of a state whose (origin,
   expr) pairs are `pairs`: each expression derived by `byte`, and as a 256-bit int the bytes whose
   derivatives are the same (class_of). The pairs whose derivative is NOTHING are left out and
   each other one comes back as (origin, derivative): the original pair object where the derivative is the expression itself (a loop).
   `unsure` lists the positions in `live` of the derivatives that are neither nullable nor free of
   & and ¬ nor non-empty by their structure (surely_nonempty; an empty tuple when none is): only
   those may still be empty, which the caller's search (ExprSet.is_empty) decides. Every other kept derivative is non-empty, as the constructors
   reduce an empty node to NOTHING where no & or ¬ is involved. */
static PyObject *store_step_pairs(Store *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0])) { PyErr_SetString(PyExc_TypeError, "step_pairs(pairs: tuple, byte)"); return NULL; }
    long byte = PyLong_AsLong(args[1]);
    if (byte == -1 && PyErr_Occurred()) return NULL;
    if (byte < 0 || byte > 255) { PyErr_SetString(PyExc_ValueError, "a byte is 0..255"); return NULL; }
    uint64_t klass[4];
    Ids unsure;
    ids_init(&unsure);
    PyObject *result = NULL, *live = step_live(s, args[0], (int)byte, klass, &unsure);
    PyObject *positions = live ? PyTuple_New(unsure.n) : NULL;
    for (Py_ssize_t i = 0; positions && i < unsure.n; i++) {
        PyObject *value = PyLong_FromLong(unsure.items[i]);
        if (!value) Py_CLEAR(positions);
        else PyTuple_SET_ITEM(positions, i, value);
    }
    ids_free(&unsure);
    PyObject *mask = positions ? mask_to_int(klass) : NULL;
    if (mask) result = Py_BuildValue("(NNN)", live, mask, positions);
    else {
        Py_XDECREF(live);
        Py_XDECREF(positions);
    }
    return result;
}

/* The 256 int32 cells of `table` (a C-contiguous buffer, writable where asked) from `offset`:
   0 with the buffer held in `view` and the row in *row, -1 with an exception (nothing held). */
static int table_row(PyObject *table, Py_ssize_t offset, int writable, Py_buffer *view, int32_t **row) {
    if (PyObject_GetBuffer(table, view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != 4 || (view->format && strcmp(view->format, "i") != 0 && strcmp(view->format, "<i") != 0 &&
                                strcmp(view->format, "=i") != 0)) {
        PyErr_SetString(PyExc_TypeError, "the table is an int32 array");
    } else if (offset < 0 || offset + 256 > view->len / 4) {
        PyErr_SetString(PyExc_IndexError, "the row is outside the table");
    } else {
        *row = (int32_t *)view->buf + offset;
        return 0;
    }
    PyBuffer_Release(view);
    return -1;
}

/* fill_class(table, offset, klass, value) -> left: table[offset + b] = value for every byte b of
   `klass` (a 256-bit int; `table` a writable C-contiguous int32 buffer with 256 cells from
   `offset`), and how many of those 256 cells are still 0 (not made) afterwards. A lexer state's
   row of the dense table, one byte class at a time. */
static PyObject *fill_class(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "fill_class(table, offset, klass, value)"); return NULL; }
    Py_ssize_t offset = PyLong_AsSsize_t(args[1]);
    if (offset == -1 && PyErr_Occurred()) return NULL;
    uint64_t klass[4];
    if (int_to_mask(args[2], klass) < 0) return NULL;
    long value = PyLong_AsLong(args[3]);
    if (value == -1 && PyErr_Occurred()) return NULL;
    Py_buffer view;
    int32_t *row;
    if (table_row(args[0], offset, 1, &view, &row) < 0) return NULL;
    long left = 0;
    for (int b = 0; b < 256; b++) {
        if (has_byte(klass, b)) row[b] = (int32_t)value;
        left += row[b] == 0;
    }
    PyBuffer_Release(&view);
    return PyLong_FromLong(left);
}

int untrack_tuples(PyObject *o, int depth) {
    if (!PyObject_IS_GC(o)) return 1;
    if (!PyTuple_CheckExact(o) || depth == 0) return !PyObject_GC_IsTracked(o);
    if (!PyObject_GC_IsTracked(o)) return 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++)
        if (!untrack_tuples(PyTuple_GET_ITEM(o, i), depth - 1)) return 0;
    PyObject_GC_UnTrack(o);
    return 1;
}

/* untracked(obj) -> obj: a tuple of atoms or of such tuples (six levels at most) taken off the
   cyclic collector's lists at once, rather than at the first collection that meets it. A dict
   keyed by it then stays untracked: a tracked key makes a dict tracked again, and every full
   collection visits each entry of a tracked dict (a lexer's 100k states, 25-100 ms). */
static PyObject *untracked(PyObject *module, PyObject *arg) {
    (void)module;
    untrack_tuples(arg, 6);
    Py_INCREF(arg);
    return arg;
}

/* row_of(table, offset, bias): the 256 cells of an int32 table from `offset`, each less `bias`, as
   an untracked tuple of ints (row_tuple). */
static PyObject *row_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "row_of(table, offset, bias)"); return NULL; }
    Py_ssize_t offset = PyLong_AsSsize_t(args[1]);
    long bias = PyLong_AsLong(args[2]);
    if ((offset == -1 || bias == -1) && PyErr_Occurred()) return NULL;
    Py_buffer view;
    int32_t *row;
    if (table_row(args[0], offset, 0, &view, &row) < 0) return NULL;
    PyObject *result = row_tuple(row, (int32_t)bias);
    PyBuffer_Release(&view);
    return result;
}

/* ---- the read-only views: kinds, nullables, args --------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Store *store;
    int field; /* 0 kinds, 1 nullables, 2 args */
} View;

static PyTypeObject ViewType;

static Py_ssize_t view_length(View *v) { return v->store->n; }

static PyObject *node_args(Store *s, int32_t id) {
    const Node *node = &s->nodes[id];
    switch (node->kind) {
    case NOTHING_KIND: case EPSILON_KIND:
        Py_RETURN_NONE;
    case BYTES_KIND:
        return mask_to_int(node->first);
    case LITERAL_KIND:
        return Py_BuildValue("(OL)", s->lits[node->a], (long long)node->b);
    case CONCAT_KIND: case OR_KIND: case AND_KIND: {
        PyObject *items = PyTuple_New((Py_ssize_t)node->b);
        if (!items) return NULL;
        for (int64_t i = 0; i < node->b; i++) {
            PyObject *child = PyLong_FromLong(s->pool[node->a + i]);
            if (!child) { Py_DECREF(items); return NULL; }
            PyTuple_SET_ITEM(items, (Py_ssize_t)i, child);
        }
        return items;
    }
    case NOT_KIND:
        return PyLong_FromLongLong(node->a);
    default:
        if (node->c < 0) return Py_BuildValue("(LLO)", (long long)node->a, (long long)node->b, Py_None);
        return Py_BuildValue("(LLL)", (long long)node->a, (long long)node->b, (long long)node->c);
    }
}

static PyObject *view_item(View *v, Py_ssize_t i) {
    Store *s = v->store;
    if (i < 0 || i >= s->n) { PyErr_SetString(PyExc_IndexError, "no such expression node"); return NULL; }
    if (v->field == 0) return PyLong_FromLong(s->nodes[i].kind);
    if (v->field == 1) return PyBool_FromLong(s->nodes[i].nullable);
    return node_args(s, (int32_t)i);
}

static void view_dealloc(View *v) {
    Py_XDECREF(v->store);
    Py_TYPE(v)->tp_free((PyObject *)v);
}

static PySequenceMethods view_sequence = {
    .sq_length = (lenfunc)view_length,
    .sq_item = (ssizeargfunc)view_item,
};

static PyTypeObject ViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "grammar_decode.ir._exprs.View",
    .tp_basicsize = sizeof(View),
    .tp_dealloc = (destructor)view_dealloc,
    .tp_as_sequence = &view_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only sequence over the nodes of a Store (kinds, nullables or args).",
};

static PyObject *make_view(Store *s, int field) {
    View *v = PyObject_New(View, &ViewType);
    if (!v) return NULL;
    Py_INCREF(s);
    v->store = s;
    v->field = field;
    return (PyObject *)v;
}

static PyObject *store_get_kinds(Store *s, void *unused) { (void)unused; return make_view(s, 0); }
static PyObject *store_get_nullables(Store *s, void *unused) { (void)unused; return make_view(s, 1); }
static PyObject *store_get_args(Store *s, void *unused) { (void)unused; return make_view(s, 2); }

/* ---- the type -------------------------------------------------------------------------------- */

static PyObject *store_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"mutation", NULL};
    int mutation = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$i", keywords, &mutation)) return NULL;
    Store *s = (Store *)type->tp_alloc(type, 0);
    if (!s) return NULL;
    s->mutation = mutation;
    uint64_t zero[4] = {0, 0, 0, 0};
    /* the three fixed ids, in order: NOTHING, EPSILON, ANYTHING (¬∅) */
    if (intern(s, NOTHING_KIND, 0, 0, 0, 0, NULL, 0, zero, NULL) != NOTHING ||
        intern(s, EPSILON_KIND, 1, 0, 0, 0, NULL, 0, zero, NULL) != EPSILON ||
        intern(s, NOT_KIND, 1, NOTHING, 0, 0, NULL, 0, zero, NULL) != ANYTHING) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

static void store_dealloc(Store *s) {
    for (int32_t i = 0; i < s->nlits; i++) Py_DECREF(s->lits[i]);
    free(s->lits);
    free(s->nodes);
    free(s->pool);
    free(s->index);
    free(s->dkeys);
    free(s->dvals);
    free(s->old_index);
    free(s->old_dkeys);
    free(s->old_dvals);
    free(s->marks);
    free(s->bounds);
    Py_XDECREF(s->decided);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static Py_ssize_t store_length(Store *s) { return s->n; }

static PySequenceMethods store_sequence = {.sq_length = (lenfunc)store_length};

static PyMethodDef store_methods[] = {
    {"byteset", (PyCFunction)store_byteset, METH_O, "One byte out of a 256-bit set."},
    {"literal_from", (PyCFunction)store_literal_from, METH_VARARGS, "The bytes data[start:]."},
    {"concat", (PyCFunction)(void (*)(void))store_concat, METH_FASTCALL, "Concatenation."},
    {"alt", (PyCFunction)(void (*)(void))store_alt, METH_FASTCALL, "Union."},
    {"both", (PyCFunction)(void (*)(void))store_both, METH_FASTCALL, "Intersection."},
    {"negate", (PyCFunction)store_negate, METH_O, "Complement."},
    {"repeat", (PyCFunction)(void (*)(void))store_repeat, METH_FASTCALL, "item{lo,hi} (hi None: unbounded)."},
    {"derivative", (PyCFunction)(void (*)(void))store_derivative, METH_FASTCALL, "The derivative by one byte."},
    {"step_pairs", (PyCFunction)(void (*)(void))store_step_pairs, METH_FASTCALL,
     "step_pairs(pairs, byte) -> (the live (origin, derivative) pairs, their byte class, whether any may be empty)."},
    {"use_decided", (PyCFunction)store_use_decided, METH_O,
     "use_decided(memo) -> None: the Python set's memo of emptiness, read and written by the probes for words."},
    {"decide", (PyCFunction)store_decide, METH_O,
     "decide(expr) -> 1 (a word shown), 2 (empty, searched) or 0 (not decided within the store's bound)."},
    {"witnessed", (PyCFunction)store_witnessed, METH_O,
     "witnessed(expr) -> whether its structure shows expr non-empty (a word of it found); False decides nothing."},
    {"make_cell", (PyCFunction)(void (*)(void))store_make_cell, METH_FASTCALL,
     "make_cell(core, state, byte) -> the state a lexer transition leads to, made and written (ir/_cells.c), or None."},
    {"make_start", (PyCFunction)(void (*)(void))store_make_start, METH_FASTCALL,
     "make_start(core, key, origins, alive) -> the state before any byte of unguarded origins (ir/_cells.c), or None."},
    {"first_bytes", (PyCFunction)store_first_bytes, METH_O, "The bytes that may start the node."},
    {"byte_classes", (PyCFunction)store_byte_classes, METH_O,
     "The bytes in classes with equal derivatives (first positions only), by least byte."},
    {"has_boolean", (PyCFunction)store_has_boolean, METH_O, "Whether & or ¬ occurs in the node."},
    {"has_unbounded_repeat", (PyCFunction)store_has_unbounded_repeat, METH_O, "Whether a repeat without bound occurs."},
    {"memo_size", (PyCFunction)store_memo_size, METH_NOARGS, "Derivatives memoised."},
    {"nbytes", (PyCFunction)store_nbytes, METH_NOARGS, "Bytes held by the arrays."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef store_getset[] = {
    {"kinds", (getter)store_get_kinds, NULL, "The kind of each node.", NULL},
    {"nullables", (getter)store_get_nullables, NULL, "Whether each node matches the empty string.", NULL},
    {"args", (getter)store_get_args, NULL, "The arguments of each node, as regex.py keeps them.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "grammar_decode.ir._exprs.Store",
    .tp_basicsize = sizeof(Store),
    .tp_dealloc = (destructor)store_dealloc,
    .tp_as_sequence = &store_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Hash-consed regular expressions over bytes (ir/regex.py's store, in C).",
    .tp_methods = store_methods,
    .tp_getset = store_getset,
    .tp_new = store_new,
};

static PyMethodDef module_methods[] = {
    {"fill_class", (PyCFunction)(void (*)(void))fill_class, METH_FASTCALL,
     "fill_class(table, offset, klass, value) -> cells of the row still 0."},
    {"untracked", (PyCFunction)untracked, METH_O,
     "untracked(obj) -> obj, untracked by the cyclic collector where it is a tuple of atoms (or of such tuples)."},
    {"row_of", (PyCFunction)(void (*)(void))row_of, METH_FASTCALL,
     "row_of(table, offset, bias) -> the 256 cells from offset, less bias: a tuple the collector does not track."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_exprs", "The expression store of ir/regex.py in C.", -1,
                                    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__exprs(void) {
    if (PyType_Ready(&StoreType) < 0 || PyType_Ready(&ViewType) < 0) return NULL;
    PyObject *one = PyLong_FromLong(1), *width = PyLong_FromLong(256);
    ZERO = PyLong_FromLong(0);
    LIMIT = one && width ? PyNumber_Lshift(one, width) : NULL;
    Py_XDECREF(one);
    Py_XDECREF(width);
    if (!ZERO || !LIMIT) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&StoreType);
    if (PyModule_AddObject(m, "Store", (PyObject *)&StoreType) < 0) {
        Py_DECREF(&StoreType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
