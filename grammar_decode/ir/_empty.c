/* Emptiness of the store's intersections, in C: a word read off an expression's structure
   (witnessed), a depth-first probe for one (probed, ExprSet._greedy_witness's port) and a bounded
   best-first search (searched, ExprSet._has_witness's port), all reading and writing the Python
   set's memo of emptiness (ExprSet._empty, handed over by use_decided). The Python versions stay
   the reference the store comparisons test against (tests/engine/test_dfa.py); see
   docs/compiled-core.md, "Fifteenth round". Part of the _exprs extension module (ir/_exprs.h). */

#include "_exprs.h"

/* Whether node d is non-empty by its structure alone, as ExprSet._infinite_less_finite's first
   case: x & ¬y1 & ¬y2 ... with one positive member x free of & and ¬ and holding an unbounded
   repeat (an infinite language: the constructors leave no empty part in it) and every y free of
   & and ¬ and of unbounded repeats (finite): x has strings longer than any y's. A JSON key
   outside the named ones is this. */
int surely_nonempty(Store *s, int32_t d) {
    const Node *node = &s->nodes[d];
    if (node->kind != AND_KIND) return 0;
    int positives = 0, infinite = 0;
    for (int64_t j = 0; j < node->b; j++) {
        const Node *member = &s->nodes[s->pool[node->a + j]];
        if (member->kind == NOT_KIND) {
            if (s->nodes[member->a].flags & (HAS_BOOLEAN | HAS_UNBOUNDED)) return 0;
        } else {
            positives++;
            infinite = !(member->flags & HAS_BOOLEAN) && (member->flags & HAS_UNBOUNDED);
        }
    }
    return positives == 1 && infinite;
}

/* A word of x (free of & and ¬, so non-empty where it is not NOTHING), among the shortest its
   structure gives (the shortest branch of each union, the fewest copies of each repeat), written
   into buf: its length, or -1 where it would be longer than cap bytes or *fuel node visits run out
   (each call spends one). */
static int some_word(Store *s, int32_t x, uint8_t *buf, int cap, int *fuel) {
    if (--*fuel < 0) return -1;
    const Node *node = &s->nodes[x];
    if (node->nullable) return 0;
    switch (node->kind) {
    case BYTES_KIND:
        if (cap < 1) return -1;
        for (int b = 0; b < 256; b++)
            if (has_byte(node->first, b)) { buf[0] = (uint8_t)b; return 1; }
        return -1;
    case LITERAL_KIND: {
        Py_ssize_t size = PyBytes_GET_SIZE(s->lits[node->a]) - (Py_ssize_t)node->b;
        if (size > cap) return -1;
        memcpy(buf, PyBytes_AS_STRING(s->lits[node->a]) + node->b, (size_t)size);
        return (int)size;
    }
    case CONCAT_KIND: {
        int length = 0;
        for (int64_t j = 0; j < s->nodes[x].b; j++) {
            int got = some_word(s, s->pool[s->nodes[x].a + j], buf + length, cap - length, fuel);
            if (got < 0) return -1;
            length += got;
        }
        return length;
    }
    case OR_KIND: {
        uint8_t best[64], trial[64];
        int shortest = -1;
        for (int64_t j = 0; j < s->nodes[x].b; j++) {
            int limit = shortest < 0 ? (cap < 64 ? cap : 64) : shortest - 1;
            int got = some_word(s, s->pool[s->nodes[x].a + j], trial, limit, fuel);
            if (got >= 0) {
                shortest = got;
                memcpy(best, trial, (size_t)got);
                if (!got) break;
            } else if (*fuel < 0) return -1;
        }
        if (shortest > 0) memcpy(buf, best, (size_t)shortest);
        return shortest;
    }
    case REPEAT_KIND: {
        int64_t lo = node->b;
        int32_t inner = (int32_t)node->a;
        int one = some_word(s, inner, buf, cap, fuel);
        if (one < 0 || (one > 0 && lo > cap / one)) return -1;
        for (int64_t k = 1; k < lo; k++) memcpy(buf + k * one, buf, (size_t)one);
        return (int)(lo * one);
    }
    default:  /* NOTHING, and & or ¬ (not asked for) */
        return -1;
    }
}

/* A lower bound of the lengths of node x's words from its structure alone (ExprSet._lower_bound):
   ¬y counts 0, x & y the larger bound, a union the least of its members that have words; -1 where
   the structure shows no word at all. Memoised per node (s->bounds); -3 on a memory error. */
static int64_t lower_bound(Store *s, int32_t x) {
    if (s->capbounds < s->n) {
        int64_t *grown = realloc(s->bounds, (size_t)s->cap * sizeof(int64_t));
        if (!grown) { PyErr_NoMemory(); return -3; }
        for (int32_t i = s->capbounds; i < s->cap; i++) grown[i] = -2;
        s->bounds = grown;
        s->capbounds = s->cap;
    }
    if (s->bounds[x] != -2) return s->bounds[x];
    const Node *node = &s->nodes[x];
    int64_t result = 0;
    switch (node->kind) {
    case NOTHING_KIND: result = -1; break;
    case EPSILON_KIND: case NOT_KIND: result = 0; break;
    case BYTES_KIND: result = is_zero(node->first) ? -1 : 1; break;
    case LITERAL_KIND: result = (int64_t)PyBytes_GET_SIZE(s->lits[node->a]) - node->b; break;
    case CONCAT_KIND: case AND_KIND: {
        int sum = node->kind == CONCAT_KIND;
        int64_t start = node->a, count = node->b;
        for (int64_t j = 0; j < count && result >= 0; j++) {
            int64_t part = lower_bound(s, s->pool[start + j]);
            if (part < -1) return part;
            if (part < 0) result = -1;
            else if (sum) result = result + part > MAX_BOUND ? MAX_BOUND : result + part;
            else if (part > result) result = part;
        }
        break;
    }
    case OR_KIND: {
        int64_t start = node->a, count = node->b;
        result = -1;
        for (int64_t j = 0; j < count; j++) {
            int64_t part = lower_bound(s, s->pool[start + j]);
            if (part < -1) return part;
            if (part >= 0 && (result < 0 || part < result)) result = part;
        }
        break;
    }
    case REPEAT_KIND: {
        int64_t lo = node->b;
        if (lo == 0) break;
        int64_t part = lower_bound(s, (int32_t)node->a);
        if (part < -1) return part;
        result = part < 0 ? -1 : (part && lo > MAX_BOUND / part ? MAX_BOUND : part * lo);
        break;
    }
    }
    s->bounds[x] = result;  /* (the table may have moved during the recursion: indexed again) */
    return result;
}

/* What the Python set's memo (s->decided) says of node id: 1 non-empty, 2 empty, 0 not known,
   -1 with an exception on error. */
static int decided(Store *s, int32_t id) {
    if (!s->decided) return 0;
    PyObject *key = PyLong_FromLong(id);
    if (!key) return -1;
    PyObject *found = PyDict_GetItemWithError(s->decided, key);
    Py_DECREF(key);
    if (!found) return PyErr_Occurred() ? -1 : 0;
    return found == Py_False ? 1 : found == Py_True ? 2 : 0;
}

/* Writes into the memo that node id is non-empty (a probe found a word through it). */
static int decide_nonempty(Store *s, int32_t id) {
    if (!s->decided) return 0;
    PyObject *key = PyLong_FromLong(id);
    if (!key) return -1;
    int failed = PyDict_SetItem(s->decided, key, Py_False);
    Py_DECREF(key);
    return failed;
}

/* The derivatives a probe expands at most (ExprSet._GREEDY_NODES). */
#define GREEDY_NODES 48

/* Whether a set (open addressing over 2^13 slots of node id + 1) holds id; added if not. */
static int seen_before(int32_t *slots, int32_t id) {
    uint32_t h = ((uint32_t)id * 2654435761u) & 8191;
    while (slots[h]) {
        if (slots[h] == id + 1) return 1;
        h = (h + 1) & 8191;
    }
    slots[h] = id + 1;
    return 0;
}

/* Pushes onto `out` the derivatives of n by each byte class not seen before, less those the
   structure shows empty, the one to try first last (a nullable one, else the least lower bound;
   the last class on a tie), as ExprSet._ranked_derivatives orders them. -1 on error. */
static int ranked(Store *s, int32_t n, Ids *out, int32_t *slots, Py_ssize_t room) {
    Py_ssize_t base = out->n;
    uint64_t left[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
    int64_t bounds[256];
    for (int w = 0; w < 4;) {
        if (!left[w]) { w++; continue; }
        int byte = 64 * w + __builtin_ctzll(left[w]);
        uint64_t klass[4];
        if (class_of(s, &n, 1, byte, klass) < 0) return -1;
        for (int v = 0; v < 4; v++) {
            klass[v] &= left[v];
            left[v] &= ~klass[v];
        }
        if (s->mutation == 9) memset(left, 0, sizeof left);  /* 9 (tests only): the first class alone */
        int32_t d = derive(s, n, byte);
        if (d < 0) return -1;
        if (d == NOTHING || (Py_ssize_t)(out->n - base) >= 256 || out->n >= room || seen_before(slots, d)) continue;
        int known = decided(s, d);
        if (known < 0) return -1;
        if (known == 2) continue;
        int64_t bound = s->nodes[d].nullable ? -1 : lower_bound(s, d);
        if (bound < -1) return -1;
        if (bound == -1 && !s->nodes[d].nullable) continue;
        /* insertion by bound, largest first; a later class goes after earlier ones of its bound */
        Py_ssize_t at = out->n;
        if (ids_push(out, d) < 0) return -1;
        while (at > base && bounds[at - 1 - base] < bound) {
            out->items[at] = out->items[at - 1];
            bounds[at - base] = bounds[at - 1 - base];
            at--;
        }
        out->items[at] = d;
        bounds[at - base] = bound;
    }
    return 0;
}

/* Whether a depth-first probe of at most GREEDY_NODES derivatives finds a word of `item`
   (ExprSet._greedy_witness: at each node the derivative closest to a word first; a node the
   Python set's memo knows non-empty ends it, and every node on the path found is written there
   as non-empty). 1, 0 (none found: decides nothing), -1 with an exception on error. */
static int probed(Store *s, int32_t item) {
    int64_t shortest = lower_bound(s, item);
    if (shortest < -1) return -1;
    if (shortest < 0 || shortest >= GREEDY_NODES) return 0;  /* no word, or one longer than a probe goes */
    int32_t *slots = calloc(8192, sizeof(int32_t));
    if (!slots) { PyErr_NoMemory(); return -1; }
    Ids candidates;  /* every frame's ranked derivatives, one after another */
    ids_init(&candidates);
    Py_ssize_t ends[GREEDY_NODES + 2], starts[GREEDY_NODES + 2];
    int32_t path[GREEDY_NODES + 2];
    int depth = 0, expanded = 1, found = 0;
    seen_before(slots, item);
    path[0] = item;
    starts[0] = 0;
    if (ranked(s, item, &candidates, slots, 4096) < 0) { found = -1; goto done; }
    ends[0] = candidates.n;
    while (depth >= 0) {
        if (ends[depth] == starts[depth]) {  /* this frame tried: back up */
            candidates.n = starts[depth];
            depth--;
            continue;
        }
        int32_t node = candidates.items[--ends[depth]];
        int known = s->nodes[node].nullable ? 1 : decided(s, node);
        if (known < 0) { found = -1; goto done; }
        if (known == 1 || s->mutation == 8) {
            found = 1;
            for (int k = 0; k <= depth && found > 0; k++)
                if (decide_nonempty(s, path[k]) < 0) found = -1;
            break;
        }
        if (expanded >= GREEDY_NODES) break;
        expanded++;
        candidates.n = ends[depth];  /* the frame keeps what it has left; its child's follow */
        depth++;
        path[depth] = node;
        starts[depth] = candidates.n;
        if (ranked(s, node, &candidates, slots, 4096) < 0) { found = -1; goto done; }
        ends[depth] = candidates.n;
    }
done:
    ids_free(&candidates);
    free(slots);
    return found;
}

/* The nodes one search() may reach before it leaves the question to Python (whose search
   counts against Limits.regex_states, after counting and the other certificates). */
#define SEARCH_NODES 1024

typedef struct { int64_t bound, order; int32_t at; } Entry;  /* a heap entry: a reached node's index */

static void heap_push(Entry *heap, Py_ssize_t *n, Entry e) {
    Py_ssize_t i = (*n)++;
    while (i > 0) {
        Py_ssize_t up = (i - 1) / 2;
        if (heap[up].bound < e.bound || (heap[up].bound == e.bound && heap[up].order < e.order)) break;
        heap[i] = heap[up];
        i = up;
    }
    heap[i] = e;
}

static Entry heap_pop(Entry *heap, Py_ssize_t *n) {
    Entry top = heap[0], last = heap[--*n];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && (heap[c + 1].bound < heap[c].bound ||
                           (heap[c + 1].bound == heap[c].bound && heap[c + 1].order < heap[c].order))) c++;
        if (last.bound < heap[c].bound || (last.bound == heap[c].bound && last.order < heap[c].order)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n > 0) heap[i] = last;
    return top;
}

/* Whether `item` matches some string, decided by a best-first search over its derivatives by
   byte class, the node closest to a word first (ExprSet._has_witness): 1 non-empty (every node on
   the path to the word written into the Python set's memo as such), 2 empty (no node reached is
   nullable, and every one is written into the memo as empty: the search reached all that each
   one reaches, less nodes known or shown empty), 0 undecided (more than SEARCH_NODES nodes: left
   to Python; so is an item whose words are longer than SEARCH_NODES / 8 bytes by the structure,
   a count such as a minLength that Python counts without deriving), -1 with an exception on
   error. */
int searched(Store *s, int32_t item) {
    int known = decided(s, item);
    if (known != 0) return known < 0 ? -1 : known;
    int64_t shortest = lower_bound(s, item);
    if (shortest < -1) return -1;
    if (shortest == -1) return 2;  /* no word by the structure alone */
    if (shortest > SEARCH_NODES / 8) return 0;  /* a long word (a minLength): Python counts it */
    int32_t *nodes = malloc(SEARCH_NODES * sizeof(int32_t)), *parent = malloc(SEARCH_NODES * sizeof(int32_t));
    int32_t *slots = calloc(16384, sizeof(int32_t));  /* node id + 1 -> reached index + 1 */
    Entry *heap = malloc(SEARCH_NODES * sizeof(Entry));
    int result = 0;
    Py_ssize_t reached = 0, queued = 0;
    int64_t order = 0;
    if (!nodes || !parent || !slots || !heap) { PyErr_NoMemory(); result = -1; goto done; }
    nodes[0] = item;
    parent[0] = 0;
    reached = 1;
    {
        uint32_t h = ((uint32_t)item * 2654435761u) & 16383;
        slots[h] = item + 1;
    }
    heap_push(heap, &queued, (Entry){0, order++, 0});
    while (queued) {
        Entry top = heap_pop(heap, &queued);
        int32_t node = nodes[top.at];
        int known = s->nodes[node].nullable ? 1 : decided(s, node);
        if (known < 0) { result = -1; goto done; }
        if (known == 1) {  /* a word: every node on the way to it has one */
            for (int32_t at = top.at;; at = parent[at]) {
                if (decide_nonempty(s, nodes[at]) < 0) { result = -1; goto done; }
                if (at == 0) break;
            }
            result = 1;
            goto done;
        }
        uint64_t left[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
        for (int w = 0; w < 4;) {
            if (!left[w]) { w++; continue; }
            int byte = 64 * w + __builtin_ctzll(left[w]);
            uint64_t klass[4];
            if (class_of(s, &node, 1, byte, klass) < 0) { result = -1; goto done; }
            for (int v = 0; v < 4; v++) {
                klass[v] &= left[v];
                left[v] &= ~klass[v];
            }
            if (s->mutation == 9) memset(left, 0, sizeof left);  /* 9 (tests only): the first class alone */
            int32_t d = derive(s, node, byte);
            if (d < 0) { result = -1; goto done; }
            if (d == NOTHING) continue;
            uint32_t h = ((uint32_t)d * 2654435761u) & 16383;
            while (slots[h] && slots[h] != d + 1) h = (h + 1) & 16383;
            if (slots[h]) continue;  /* reached before */
            int dknown = decided(s, d);
            if (dknown < 0) { result = -1; goto done; }
            if (dknown == 2) continue;
            int64_t bound = s->nodes[d].nullable || dknown == 1 ? 0 : lower_bound(s, d);
            if (bound < -1) { result = -1; goto done; }
            if (bound == -1) continue;
            if (reached == SEARCH_NODES) goto done;  /* undecided: Python's search goes on */
            slots[h] = d + 1;
            nodes[reached] = d;
            parent[reached] = top.at;
            heap_push(heap, &queued, (Entry){bound, order++, (int32_t)reached});
            reached++;
        }
    }
    for (Py_ssize_t i = 0; i < reached; i++) {
        PyObject *key = PyLong_FromLong(nodes[i]);
        if (!key || (s->decided && PyDict_SetItem(s->decided, key, Py_True) < 0)) {
            Py_XDECREF(key);
            result = -1;
            goto done;
        }
        Py_DECREF(key);
    }
    result = 2;
done:
    free(nodes);
    free(parent);
    free(slots);
    free(heap);
    return result;
}


/* Whether node d is non-empty because its structure shows a word of it: a node free of & and ¬
   is (the constructors reduce an empty one to NOTHING); a concatenation where each part is; a
   union where one branch is; a repeat that may be empty or whose item is; an intersection where
   a word of some member free of & and ¬ (some_word) is matched by every other member (derivatives
   by its bytes, then nullable). 1, 0 (not shown: maybe empty), -1 with an exception on error.
   Sound only (0 decides nothing): `pattern & char{0,k}` (a pattern or format with a length
   bound, a host name's 253 characters) is shown at every count by the pattern's shortest rest. */
int witnessed(Store *s, int32_t d, int *fuel) {
    if (--*fuel < 0 || d == NOTHING) return 0;
    if (!(s->nodes[d].flags & HAS_BOOLEAN)) return 1;
    int known = decided(s, d);
    if (known != 0) return known < 0 ? -1 : known == 1;
    const Node *node = &s->nodes[d];
    switch (node->kind) {
    case CONCAT_KIND: case OR_KIND: {
        int any = node->kind == OR_KIND;
        for (int64_t j = 0; j < s->nodes[d].b; j++) {
            int shown = witnessed(s, s->pool[s->nodes[d].a + j], fuel);
            if (shown < 0) return -1;
            if (shown && any) return 1;
            if (!shown && !any) return 0;
        }
        return !any;
    }
    case REPEAT_KIND:
        return node->b == 0 ? 1 : witnessed(s, (int32_t)node->a, fuel);
    case AND_KIND: {  /* each member free of & and ¬ in turn gives the word (one may be the bound) */
        Ids members;
        ids_init(&members);
        for (int64_t j = 0; j < node->b; j++)  /* copied: derivatives below may move the pool */
            if (ids_push(&members, s->pool[node->a + j]) < 0) { ids_free(&members); return -1; }
        int shown = 0;
        for (Py_ssize_t c = 0; c < members.n && !shown && *fuel >= 0; c++) {
            int32_t source = members.items[c];
            if (s->nodes[source].flags & HAS_BOOLEAN) continue;
            uint8_t word[64];
            int length = some_word(s, source, word, 64, fuel);
            shown = length >= 0;
            for (Py_ssize_t i = 0; shown && i < members.n && s->mutation != 7; i++) {  /* 7 (tests only): unchecked */
                int32_t e = members.items[i];
                if (i == c) continue;
                for (int k = 0; k < length && e != NOTHING; k++) {
                    e = derive(s, e, word[k]);
                    if (e < 0) { ids_free(&members); return -1; }
                }
                shown = e != NOTHING && s->nodes[e].nullable;
            }
        }
        ids_free(&members);
        return shown ? 1 : probed(s, d);
    }
    default:
        return 0;
    }
}

/* use_decided(memo): the Python set's memo of emptiness (a dict from node id to bool), read by
   the probes for words and written where they find one. */
PyObject *store_use_decided(Store *s, PyObject *arg) {
    if (!PyDict_Check(arg)) { PyErr_SetString(PyExc_TypeError, "use_decided(a dict)"); return NULL; }
    Py_INCREF(arg);
    Py_XSETREF(s->decided, arg);
    Py_RETURN_NONE;
}

int emptiness_of(Store *s, int32_t d) {
    if (d == NOTHING) return 2;
    const Node *node = &s->nodes[d];
    /* free of & and ¬, a node is non-empty: the constructors reduce an empty one to NOTHING */
    if (node->nullable || !(node->flags & HAS_BOOLEAN) || surely_nonempty(s, d)) return 1;
    int fuel = WITNESS_FUEL;
    int shown = witnessed(s, d, &fuel);
    return shown == 0 ? searched(s, d) : shown;
}

/* decide(expr) -> 0, 1 or 2: whether expr is empty as the store can tell at once (1: a word shown,
   witnessed; 2: empty, searched; 0: not decided within the search's bound, for the Python set's
   search). ExprSet.is_empty asks it first. */
PyObject *store_decide(Store *s, PyObject *arg) {
    int32_t d = node_arg(s, arg);
    if (d < 0) return NULL;
    int found = emptiness_of(s, d);
    if (found < 0) return NULL;
    return PyLong_FromLong(found);
}

/* witnessed(expr) -> bool: whether the structure shows expr non-empty (witnessed above); False
   decides nothing. For tests and probes: step_pairs asks it of each derivative it would list as
   unsure. */
PyObject *store_witnessed(Store *s, PyObject *arg) {
    int32_t d = node_arg(s, arg);
    if (d < 0) return NULL;
    int fuel = WITNESS_FUEL;
    int shown = witnessed(s, d, &fuel);
    if (shown < 0) return NULL;
    return PyBool_FromLong(shown);
}
