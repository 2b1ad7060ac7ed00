/* The parser's rewrite of a grammar (engine/transform.py) in C: the same five steps, step for
   step and in the same order, so that the rules, their numbering and the order of every rule's
   alternatives come out exactly as the Python rewrite makes them (transform.py is the reference:
   its docstrings say what each step does and why; this file says how it is stored). A large
   schema's rewrite was ~30 % of its compile in Python (a few µs per symbol); here it is a few
   hundred ns per symbol.

   Storage: every alternative (a sequence of symbols: a lexeme >= 0, a rule ~r < 0) is interned
   in one pool, so an alternative is an int id and equal alternatives share it: "each rule's
   alternatives once" is a pass over ids with a stamp per id, and "rules with the same
   alternatives" compares id sequences. A rule is a growable array of alternative ids.

   rewrite(alternatives, start, lexemes, empty, max_size, deadline[, mutation])
       alternatives: per rule, a list of tuples of ints; start: the start symbol (a lexeme is
       wrapped in a new rule "start"); lexemes: how many lexemes; empty: the lexemes that match
       nothing (a sorted tuple); max_size: as transform.rewrite's; deadline: called between
       steps and every 1,024 rules (it raises to stop the rewrite). mutation (tests only): 1 makes
       step 3 keep every nullable symbol (no variant without it).
   -> (0, rules, start_rule, start_nullable, new_rules, peak): rules as lists of tuples,
      new_rules [(source rule or -1, suffix)], peak the largest size checked;
      (1, size): the grammar grows past max_size (size: the size reached);
      (2, 0): the start derives nothing; (3, 0): the grammar admits no text (step 3). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_vec.h"


static int vec_copy(Vec *to, const Vec *from) {
    to->len = 0;
    if (vec_reserve(to, from->len) < 0) return -1;
    if (from->len) memcpy(to->data, from->data, (size_t)from->len * sizeof(int32_t));
    to->len = from->len;
    return 0;
}

/* ---- the pool of interned alternatives ---- */

typedef struct {
    Vec sym;               /* every alternative's symbols, one after another */
    Py_ssize_t *start;     /* per alternative: where its symbols begin in sym */
    int32_t *len;          /* per alternative: how many */
    uint32_t *hash;
    Py_ssize_t count, cap;
    int32_t *table;        /* open addressing: alternative id + 1, 0 for a free slot */
    Py_ssize_t table_cap;  /* a power of two, at least twice count */
} Pool;

static uint32_t hash_symbols(const int32_t *s, Py_ssize_t n) {
    uint32_t h = 0x811c9dc5u ^ (uint32_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (uint32_t)s[i];
        h *= 0x01000193u;
        h ^= h >> 15;
    }
    return h;
}

static int pool_grow_table(Pool *p) {
    Py_ssize_t cap = p->table_cap ? p->table_cap * 2 : 1024;
    int32_t *table = calloc((size_t)cap, sizeof(int32_t));
    if (!table) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t id = 0; id < p->count; id++) {
        Py_ssize_t slot = p->hash[id] & (cap - 1);
        while (table[slot]) slot = (slot + 1) & (cap - 1);
        table[slot] = (int32_t)id + 1;
    }
    free(p->table);
    p->table = table;
    p->table_cap = cap;
    return 0;
}

/* The id of the alternative s[0..n) (s must not point into the pool), -1 on error. */
static int32_t pool_intern(Pool *p, const int32_t *s, Py_ssize_t n) {
    if (2 * (p->count + 1) > p->table_cap && pool_grow_table(p) < 0) return -1;
    uint32_t h = hash_symbols(s, n);
    Py_ssize_t slot = h & (p->table_cap - 1);
    while (p->table[slot]) {
        int32_t id = p->table[slot] - 1;
        if (p->hash[id] == h && p->len[id] == n &&
            (n == 0 || !memcmp(p->sym.data + p->start[id], s, (size_t)n * sizeof(int32_t))))
            return id;
        slot = (slot + 1) & (p->table_cap - 1);
    }
    if (p->count == INT32_MAX - 1) { PyErr_SetString(PyExc_OverflowError, "too many alternatives"); return -1; }
    if (p->count == p->cap) {
        Py_ssize_t cap = p->cap ? p->cap * 2 : 1024;
        Py_ssize_t *start = realloc(p->start, (size_t)cap * sizeof(Py_ssize_t));
        if (!start) { PyErr_NoMemory(); return -1; }
        p->start = start;
        int32_t *len = realloc(p->len, (size_t)cap * sizeof(int32_t));
        if (!len) { PyErr_NoMemory(); return -1; }
        p->len = len;
        uint32_t *hash = realloc(p->hash, (size_t)cap * sizeof(uint32_t));
        if (!hash) { PyErr_NoMemory(); return -1; }
        p->hash = hash;
        p->cap = cap;
    }
    if (vec_reserve(&p->sym, n) < 0) return -1;
    int32_t id = (int32_t)p->count++;
    p->start[id] = p->sym.len;
    p->len[id] = (int32_t)n;
    p->hash[id] = h;
    if (n) memcpy(p->sym.data + p->sym.len, s, (size_t)n * sizeof(int32_t));
    p->sym.len += n;
    p->table[slot] = id + 1;
    return id;
}

/* ---- the rewrite's state ---- */

typedef struct {
    Pool pool;
    Vec *rules;            /* per rule: its alternatives' ids */
    Py_ssize_t count, cap;
    Vec new_source;        /* per rule past the grammar's own: the rule it was made from, or -1 */
    Vec new_kind;          /* ... and its suffix: 0 "start", 1 "·", 2 "'" */
    int32_t *stamp;        /* per alternative id: the pass that saw it last (dedup) */
    Py_ssize_t stamp_cap;
    int32_t stamp_now;
    Vec scratch;           /* an alternative being built */
    PyObject *deadline;
    int mutation;
    Py_ssize_t lexemes;
} R;

#define SYMS(r, id) ((r)->pool.sym.data + (r)->pool.start[id])
#define LEN(r, id) ((r)->pool.len[id])

static int deadline(R *r) {
    PyObject *out = PyObject_CallNoArgs(r->deadline);
    if (!out) return -1;
    Py_DECREF(out);
    return 0;
}

static int32_t new_rule(R *r, int32_t source, int32_t kind) {
    if (r->count == r->cap) {
        Py_ssize_t cap = r->cap ? r->cap * 2 : 64;
        Vec *rules = realloc(r->rules, (size_t)cap * sizeof(Vec));
        if (!rules) { PyErr_NoMemory(); return -1; }
        memset(rules + r->cap, 0, (size_t)(cap - r->cap) * sizeof(Vec));
        r->rules = rules;
        r->cap = cap;
    }
    if (r->count >= INT32_MAX / 2) { PyErr_SetString(PyExc_OverflowError, "too many rules"); return -1; }
    if (source != -2 && (vec_push(&r->new_source, source) < 0 || vec_push(&r->new_kind, kind) < 0)) return -1;
    r->rules[r->count].len = 0;
    return (int32_t)r->count++;
}

/* Begin a dedup pass: ids seen in it are stamped with a fresh value. */
static int stamp_begin(R *r) {
    if (r->stamp_cap < r->pool.count) {
        Py_ssize_t cap = r->pool.cap > r->pool.count ? r->pool.cap : r->pool.count;
        int32_t *stamp = realloc(r->stamp, (size_t)cap * sizeof(int32_t));
        if (!stamp) { PyErr_NoMemory(); return -1; }
        memset(stamp + r->stamp_cap, 0, (size_t)(cap - r->stamp_cap) * sizeof(int32_t));
        r->stamp = stamp;
        r->stamp_cap = cap;
    }
    if (r->stamp_now == INT32_MAX) {
        memset(r->stamp, 0, (size_t)r->stamp_cap * sizeof(int32_t));
        r->stamp_now = 0;
    }
    r->stamp_now++;
    return 0;
}

/* Whether id was seen in this pass (marks it seen); ids interned after stamp_begin are new. */
static inline int stamp_seen(R *r, int32_t id) {
    if (id >= r->stamp_cap) return 0;  /* interned during the pass: the caller re-begins first */
    if (r->stamp[id] == r->stamp_now) return 1;
    r->stamp[id] = r->stamp_now;
    return 0;
}

/* v with each id kept at its first occurrence only (dict.fromkeys). */
static int dedup(R *r, Vec *v) {
    if (stamp_begin(r) < 0) return -1;
    Py_ssize_t out = 0;
    for (Py_ssize_t i = 0; i < v->len; i++)
        if (!stamp_seen(r, v->data[i])) v->data[out++] = v->data[i];
    v->len = out;
    return 0;
}

static Py_ssize_t size_of(R *r) {
    Py_ssize_t size = 0;
    for (Py_ssize_t rule = 0; rule < r->count; rule++)
        for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) size += LEN(r, r->rules[rule].data[i]) + 1;
    return size;
}

/* Whether alternative id takes part in derives(): always for some text, for the empty text only
   without a lexeme. */
static int counts(R *r, int32_t id, int with_lexemes) {
    if (with_lexemes) return 1;
    for (int32_t k = 0; k < LEN(r, id); k++) if (SYMS(r, id)[k] >= 0) return 0;
    return 1;
}

/* Which rules derive some text (with_lexemes) or the empty text (not): transform._derives.
   out: one byte per rule. */
static int derives(R *r, int with_lexemes, uint8_t *out) {
    Py_ssize_t n = r->count, alts = 0, refs = 0;
    for (Py_ssize_t rule = 0; rule < n; rule++) {
        alts += r->rules[rule].len;
        for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) refs += LEN(r, r->rules[rule].data[i]);
    }
    int32_t *owner = malloc((size_t)(alts + 1) * sizeof(int32_t));
    int32_t *waiting = malloc((size_t)(alts + 1) * sizeof(int32_t));
    int32_t *users_at = calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *users = malloc((size_t)(refs + 1) * sizeof(int32_t));
    int32_t *ready = malloc((size_t)(alts + 1) * sizeof(int32_t));
    int status = -1;
    if (!owner || !waiting || !users_at || !users || !ready) { PyErr_NoMemory(); goto done; }
    memset(out, 0, (size_t)n);
    /* count each rule's users, then place them (CSR) */
    for (Py_ssize_t rule = 0; rule < n; rule++)
        for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) {
            int32_t id = r->rules[rule].data[i];
            if (!counts(r, id, with_lexemes)) continue;
            const int32_t *s = SYMS(r, id);
            for (int32_t k = 0; k < LEN(r, id); k++) if (s[k] < 0) users_at[~s[k] + 2]++;
        }
    for (Py_ssize_t rule = 0; rule < n; rule++) users_at[rule + 2] += users_at[rule + 1];
    Py_ssize_t count = 0, nready = 0;
    for (Py_ssize_t rule = 0; rule < n; rule++)
        for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) {
            int32_t id = r->rules[rule].data[i];
            if (!counts(r, id, with_lexemes)) continue;
            const int32_t *s = SYMS(r, id);
            int32_t wait = 0;
            for (int32_t k = 0; k < LEN(r, id); k++)
                if (s[k] < 0) { users[users_at[~s[k] + 1]++] = (int32_t)count; wait++; }
            owner[count] = (int32_t)rule;
            waiting[count] = wait;
            if (!wait) ready[nready++] = (int32_t)count;
            count++;
        }
    /* users_at[rule + 1] now ends rule's users; users_at[rule] begins them */
    while (nready) {
        int32_t rule = owner[ready[--nready]];
        if (out[rule]) continue;
        out[rule] = 1;
        for (int32_t k = users_at[rule]; k < users_at[rule + 1]; k++)
            if (--waiting[users[k]] == 0) ready[nready++] = users[k];
    }
    status = 0;
done:
    free(owner); free(waiting); free(users_at); free(users); free(ready);
    return status;
}

/* Rules no path from start reaches lose their alternatives. */
static int reachable_only(R *r, int32_t start) {
    uint8_t *seen = calloc((size_t)r->count + 1, 1);
    int32_t *stack = malloc(((size_t)r->count + 1) * sizeof(int32_t));
    if (!seen || !stack) { free(seen); free(stack); PyErr_NoMemory(); return -1; }
    Py_ssize_t top = 0;
    seen[start] = 1;
    stack[top++] = start;
    while (top) {
        Vec *alts = &r->rules[stack[--top]];
        for (Py_ssize_t i = 0; i < alts->len; i++) {
            const int32_t *s = SYMS(r, alts->data[i]);
            for (int32_t k = 0; k < LEN(r, alts->data[i]); k++)
                if (s[k] < 0 && !seen[~s[k]]) { seen[~s[k]] = 1; stack[top++] = ~s[k]; }
        }
    }
    for (Py_ssize_t rule = 0; rule < r->count; rule++) if (!seen[rule]) r->rules[rule].len = 0;
    free(seen); free(stack);
    return 0;
}

/* Keep the alternatives whose rule symbols all have keep[rule] set. */
static void keep_alternatives(R *r, const uint8_t *keep) {
    for (Py_ssize_t rule = 0; rule < r->count; rule++) {
        Vec *alts = &r->rules[rule];
        Py_ssize_t out = 0;
        for (Py_ssize_t i = 0; i < alts->len; i++) {
            const int32_t *s = SYMS(r, alts->data[i]);
            int ok = 1;
            for (int32_t k = 0; k < LEN(r, alts->data[i]) && ok; k++) if (s[k] < 0 && !keep[~s[k]]) ok = 0;
            if (ok) alts->data[out++] = alts->data[i];
        }
        alts->len = out;
    }
}

/* ---- step 1: rules with equal alternatives merged (transform._merge_equal_rules) ---- */

typedef struct { int32_t rule, alt, sym; } Frame;

static uint32_t hash_ids(const Vec *v) { return hash_symbols(v->data, v->len); }

/* The alternative id with each rule r read as canonical[r] (interned), -1 on error. */
static int32_t renamed(R *r, int32_t id, const int32_t *canonical) {
    r->scratch.len = 0;
    if (vec_reserve(&r->scratch, LEN(r, id)) < 0) return -1;
    for (int32_t k = 0; k < LEN(r, id); k++) {
        int32_t s = SYMS(r, id)[k];
        r->scratch.data[r->scratch.len++] = s >= 0 ? s : ~canonical[~s];
    }
    return pool_intern(&r->pool, r->scratch.data, r->scratch.len);
}

static int merge_equal(R *r, int32_t *start) {
    Py_ssize_t n = r->count;
    int32_t *canonical = malloc((size_t)(n + 1) * sizeof(int32_t));
    uint8_t *done = calloc((size_t)n + 1, 1);
    Frame *stack = malloc((size_t)(n + 1) * sizeof(Frame));
    Py_ssize_t table_cap = 64;
    while (table_cap < 2 * n + 2) table_cap *= 2;
    int32_t *table = calloc((size_t)table_cap, sizeof(int32_t));  /* by_body: rule + 1 */
    int status = -1;
    if (!canonical || !done || !stack || !table) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t rule = 0; rule < n; rule++) canonical[rule] = (int32_t)rule;
    for (Py_ssize_t root = 0; root < n; root++) {
        if (done[root]) continue;
        Py_ssize_t top = 0;
        stack[top++] = (Frame){(int32_t)root, 0, 0};
        done[root] = 1;
        while (top) {
            Frame *f = &stack[top - 1];
            /* the next rule symbol of the rule's alternatives, in order */
            int32_t child = -1;
            Vec *alts = &r->rules[f->rule];
            while (f->alt < alts->len) {
                int32_t id = alts->data[f->alt];
                if (f->sym >= LEN(r, id)) { f->alt++; f->sym = 0; continue; }
                int32_t s = SYMS(r, id)[f->sym++];
                if (s < 0) { child = ~s; break; }
            }
            if (child >= 0) {
                if (!done[child]) {
                    done[child] = 1;
                    stack[top++] = (Frame){child, 0, 0};
                }
                continue;
            }
            int32_t rule = f->rule;
            top--;
            int changed = 0;
            for (Py_ssize_t i = 0; i < alts->len && !changed; i++) {
                const int32_t *s = SYMS(r, alts->data[i]);
                for (int32_t k = 0; k < LEN(r, alts->data[i]); k++)
                    if (s[k] < 0 && canonical[~s[k]] != ~s[k]) { changed = 1; break; }
            }
            if (changed) {
                for (Py_ssize_t i = 0; i < alts->len; i++)
                    if ((alts->data[i] = renamed(r, alts->data[i], canonical)) < 0) goto fail;
            }
            /* by_body.setdefault(tuple(alternatives), rule) */
            uint32_t h = hash_ids(alts);
            Py_ssize_t slot = h & (table_cap - 1);
            int32_t found = -1;
            while (table[slot]) {
                Vec *other = &r->rules[table[slot] - 1];
                if (other->len == alts->len &&
                    (!alts->len || !memcmp(other->data, alts->data, (size_t)alts->len * sizeof(int32_t)))) {
                    found = table[slot] - 1;
                    break;
                }
                slot = (slot + 1) & (table_cap - 1);
            }
            if (found < 0) { table[slot] = rule + 1; found = rule; }
            canonical[rule] = found;
        }
        if (!(root & 1023) && deadline(r) < 0) goto fail;  /* the reference checks after each root */
    }
    int identity = 1;
    for (Py_ssize_t rule = 0; rule < n; rule++) if (canonical[rule] != rule) { identity = 0; break; }
    if (!identity) {
        for (Py_ssize_t rule = 0; rule < n; rule++) {
            Vec *alts = &r->rules[rule];
            for (Py_ssize_t i = 0; i < alts->len; i++) {
                int32_t id = alts->data[i];
                int changed = 0;
                for (int32_t k = 0; k < LEN(r, id); k++) {
                    int32_t s = SYMS(r, id)[k];
                    if (s < 0 && canonical[~s] != ~s) { changed = 1; break; }
                }
                if (changed && (alts->data[i] = renamed(r, id, canonical)) < 0) goto fail;
            }
        }
        *start = canonical[*start];
    }
    status = 0;
fail:
    free(canonical); free(done); free(stack); free(table);
    return status;
}

/* ---- strongly connected components (transform._cyclic_components) ---- */

/* edges: CSR (edge_at per node, edge_to); components out as CSR (comp_at, comp) */
static int cyclic_components(Py_ssize_t n, const int32_t *edge_at, const int32_t *edge_to, Vec *comp_at, Vec *comp) {
    uint8_t *entered = calloc((size_t)n + 1, 1);
    int32_t *inner_at = calloc((size_t)n + 2, sizeof(int32_t));
    int32_t *inner = malloc(((size_t)edge_at[n] + 1) * sizeof(int32_t));
    int32_t *index_of = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *low = malloc(((size_t)n + 1) * sizeof(int32_t));
    uint8_t *on_stack = calloc((size_t)n + 1, 1);
    int32_t *stack = malloc(((size_t)n + 1) * sizeof(int32_t));
    int32_t *work_node = malloc(((size_t)edge_at[n] + n + 1) * sizeof(int32_t));
    int32_t *work_edge = malloc(((size_t)edge_at[n] + n + 1) * sizeof(int32_t));
    int status = -1;
    if (!entered || !inner_at || !inner || !index_of || !low || !on_stack || !stack || !work_node || !work_edge) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t e = 0; e < edge_at[n]; e++) entered[edge_to[e]] = 1;
    Py_ssize_t m = 0;
    for (Py_ssize_t node = 0; node < n; node++) {
        inner_at[node] = (int32_t)m;
        if (edge_at[node + 1] > edge_at[node] && entered[node])
            for (int32_t e = edge_at[node]; e < edge_at[node + 1]; e++) {
                int32_t t = edge_to[e];
                if (edge_at[t + 1] > edge_at[t] && entered[t]) inner[m++] = t;
            }
        index_of[node] = -1;
        low[node] = 0;
    }
    inner_at[n] = (int32_t)m;
    Py_ssize_t top = 0, counter = 0;
    comp_at->len = 0;
    comp->len = 0;
    if (vec_push(comp_at, 0) < 0) goto done;
    for (Py_ssize_t root = 0; root < n; root++) {
        if (inner_at[root + 1] == inner_at[root] || index_of[root] >= 0) continue;
        Py_ssize_t work = 0;
        work_node[work] = (int32_t)root; work_edge[work++] = 0;
        while (work) {
            work--;
            int32_t node = work_node[work], edge = work_edge[work];
            if (edge == 0) {
                index_of[node] = low[node] = (int32_t)counter++;
                stack[top++] = node;
                on_stack[node] = 1;
            }
            int32_t degree = inner_at[node + 1] - inner_at[node];
            if (edge < degree) {
                work_node[work] = node; work_edge[work++] = edge + 1;
                int32_t target = inner[inner_at[node] + edge];
                if (index_of[target] < 0) { work_node[work] = target; work_edge[work++] = 0; }
                else if (on_stack[target] && index_of[target] < low[node]) low[node] = index_of[target];
                continue;
            }
            if (low[node] == index_of[node]) {
                Py_ssize_t first = comp->len;
                int32_t member;
                do {
                    member = stack[--top];
                    on_stack[member] = 0;
                    if (vec_push(comp, member) < 0) goto done;
                } while (member != node);
                int self = 0;
                for (int32_t e = inner_at[node]; e < inner_at[node + 1]; e++) if (inner[e] == node) self = 1;
                if (comp->len - first > 1 || self) {
                    /* sorted: insertion sort (components are small) */
                    for (Py_ssize_t i = first + 1; i < comp->len; i++) {
                        int32_t x = comp->data[i];
                        Py_ssize_t j = i;
                        while (j > first && comp->data[j - 1] > x) { comp->data[j] = comp->data[j - 1]; j--; }
                        comp->data[j] = x;
                    }
                    if (vec_push(comp_at, (int32_t)comp->len) < 0) goto done;
                } else {
                    comp->len = first;
                }
            }
            if (work) {
                int32_t parent = work_node[work - 1];
                if (low[node] < low[parent]) low[parent] = low[node];
            }
        }
    }
    status = 0;
done:
    free(entered); free(inner_at); free(inner); free(index_of); free(low); free(on_stack); free(stack);
    free(work_node); free(work_edge);
    return status;
}

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Per rule, the sorted distinct rules its alternatives begin with (unit_only: its alternatives
   that are one rule alone), as CSR; then their cyclic components. */
static int first_symbol_components(R *r, int unit_only, Vec *comp_at, Vec *comp) {
    Py_ssize_t n = r->count;
    int32_t *edge_at = malloc(((size_t)n + 1) * sizeof(int32_t));
    Vec to = {0};
    int status = -1;
    if (!edge_at) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t rule = 0; rule < n; rule++) {
        edge_at[rule] = (int32_t)to.len;
        Vec *alts = &r->rules[rule];
        for (Py_ssize_t i = 0; i < alts->len; i++) {
            int32_t id = alts->data[i];
            if (LEN(r, id) && SYMS(r, id)[0] < 0 && (LEN(r, id) == 1 || !unit_only))
                if (vec_push(&to, ~SYMS(r, id)[0]) < 0) goto done;
        }
        Py_ssize_t first = edge_at[rule];
        if (to.len - first > 1) {
            qsort(to.data + first, (size_t)(to.len - first), sizeof(int32_t), cmp_int32);
            Py_ssize_t out = first + 1;
            for (Py_ssize_t i = first + 1; i < to.len; i++) if (to.data[i] != to.data[out - 1]) to.data[out++] = to.data[i];
            to.len = out;
        }
    }
    edge_at[n] = (int32_t)to.len;
    if (vec_reserve(&to, 1) < 0) goto done;
    status = cyclic_components(n, edge_at, to.data, comp_at, comp);
done:
    free(edge_at);
    vec_free(&to);
    return status;
}

/* ---- the whole rewrite ---- */

static int check_size(R *r, Py_ssize_t max_size, Py_ssize_t *peak, Py_ssize_t *too_large) {
    if (deadline(r) < 0) return -1;
    Py_ssize_t size = size_of(r);
    if (size > max_size) { *too_large = size; return 1; }
    if (size > *peak) *peak = size;
    return 0;
}

/* 0 done, 1 too large (*too_large), 2 start derives nothing, 3 no text, 4 only the empty text
   (start_nullable, rules as they stand), -1 error */
static int run(R *r, int32_t *start_rule, Py_ssize_t max_size, const uint8_t *empty, Py_ssize_t *peak,
               Py_ssize_t *too_large, int *start_nullable) {
    int status;
    if (merge_equal(r, start_rule) < 0) return -1;
    Py_ssize_t n = r->count;
    if (empty) {
        for (Py_ssize_t rule = 0; rule < n; rule++) {
            Vec *alts = &r->rules[rule];
            Py_ssize_t out = 0;
            for (Py_ssize_t i = 0; i < alts->len; i++) {
                const int32_t *s = SYMS(r, alts->data[i]);
                int ok = 1;
                for (int32_t k = 0; k < LEN(r, alts->data[i]) && ok; k++)
                    if (s[k] >= 0 && s[k] < r->lexemes && empty[s[k]]) ok = 0;
                if (ok) alts->data[out++] = alts->data[i];
            }
            alts->len = out;
        }
    }
    if (deadline(r) < 0) return -1;
    uint8_t *flags = malloc((size_t)n + 1);
    if (!flags) { PyErr_NoMemory(); return -1; }
    if (derives(r, 1, flags) < 0) { free(flags); return -1; }
    if (deadline(r) < 0) { free(flags); return -1; }
    if (!flags[*start_rule]) { free(flags); return 2; }
    keep_alternatives(r, flags);
    free(flags);
    if (reachable_only(r, *start_rule) < 0) return -1;

    /* 2. split the alternatives with more than one nullable rule (longer than two) */
    if (deadline(r) < 0) return -1;
    Vec nullable = {0};
    if (vec_reserve(&nullable, n) < 0) return -1;
    uint8_t *null_bytes = malloc((size_t)n + 1);
    if (!null_bytes) { vec_free(&nullable); PyErr_NoMemory(); return -1; }
    if (derives(r, 0, null_bytes) < 0) { free(null_bytes); vec_free(&nullable); return -1; }
    for (Py_ssize_t rule = 0; rule < n; rule++) nullable.data[rule] = null_bytes[rule];
    nullable.len = n;
    free(null_bytes);
    Vec out = {0}, tail_alt = {0};
    status = -1;
    for (Py_ssize_t index = 0; index < r->count; index++) {
        if (!(index & 1023) && deadline(r) < 0) goto fail2;
        out.len = 0;
        for (Py_ssize_t i = 0; i < r->rules[index].len; i++) {
            int32_t id = r->rules[index].data[i];
            int32_t len = LEN(r, id);
            if (len > 2) {
                int optional = 0;
                for (int32_t k = 0; k < len; k++) {
                    int32_t s = SYMS(r, id)[k];
                    if (s < 0 && nullable.data[~s]) optional++;
                }
                if (optional > 1) {
                    int32_t tail = new_rule(r, (int32_t)index, 1);
                    if (tail < 0) goto fail2;
                    tail_alt.len = 0;
                    if (vec_reserve(&tail_alt, len) < 0) goto fail2;
                    int all_nullable = 1;
                    for (int32_t k = 1; k < len; k++) {
                        int32_t s = SYMS(r, id)[k];
                        tail_alt.data[tail_alt.len++] = s;
                        if (!(s < 0 && nullable.data[~s])) all_nullable = 0;
                    }
                    int32_t rest = pool_intern(&r->pool, tail_alt.data, tail_alt.len);
                    if (rest < 0 || vec_push(&r->rules[tail], rest) < 0) goto fail2;
                    if (vec_push(&nullable, all_nullable) < 0) goto fail2;
                    int32_t pair[2] = {SYMS(r, id)[0], ~tail};
                    id = pool_intern(&r->pool, pair, 2);
                    if (id < 0) goto fail2;
                }
            }
            if (vec_push(&out, id) < 0) goto fail2;
        }
        if (vec_copy(&r->rules[index], &out) < 0) goto fail2;
    }
    int checked = check_size(r, max_size, peak, too_large);
    if (checked) { status = checked; goto fail2; }

    /* 3. empty alternatives: every nullable rule optional where it is used */
    *start_nullable = nullable.data[*start_rule] != 0;
    {
        Vec options = {0}, option_at = {0}, next = {0}, next_at = {0}, variants = {0};
        for (Py_ssize_t index = 0; index < r->count; index++) {
            if (!(index & 1023) && deadline(r) < 0) goto fail3;
            variants.len = 0;
            for (Py_ssize_t i = 0; i < r->rules[index].len; i++) {
                int32_t id = r->rules[index].data[i];
                /* options: the symbol sequences so far, in the reference's order (with the
                   symbol first, then without it where it is a nullable rule) */
                options.len = 0;
                option_at.len = 0;
                if (vec_push(&option_at, 0) < 0 || vec_push(&option_at, 0) < 0) goto fail3;
                for (int32_t k = 0; k < LEN(r, id); k++) {
                    int32_t s = SYMS(r, id)[k];
                    int optional = s < 0 && nullable.data[~s] && r->mutation != 1;
                    next.len = 0;
                    next_at.len = 0;
                    if (vec_push(&next_at, 0) < 0) goto fail3;
                    Py_ssize_t count = option_at.len - 1;
                    for (Py_ssize_t o = 0; o < count; o++) {
                        for (int32_t j = option_at.data[o]; j < option_at.data[o + 1]; j++)
                            if (vec_push(&next, options.data[j]) < 0) goto fail3;
                        if (vec_push(&next, s) < 0 || vec_push(&next_at, (int32_t)next.len) < 0) goto fail3;
                    }
                    if (optional)
                        for (Py_ssize_t o = 0; o < count; o++) {
                            for (int32_t j = option_at.data[o]; j < option_at.data[o + 1]; j++)
                                if (vec_push(&next, options.data[j]) < 0) goto fail3;
                            if (vec_push(&next_at, (int32_t)next.len) < 0) goto fail3;
                        }
                    Vec swap = options; options = next; next = swap;
                    swap = option_at; option_at = next_at; next_at = swap;
                }
                for (Py_ssize_t o = 0; o + 1 < option_at.len; o++) {
                    Py_ssize_t len = option_at.data[o + 1] - option_at.data[o];
                    if (!len) continue;
                    int32_t variant = pool_intern(&r->pool, options.data + option_at.data[o], len);
                    if (variant < 0 || vec_push(&variants, variant) < 0) goto fail3;
                }
            }
            if (dedup(r, &variants) < 0 || vec_copy(&r->rules[index], &variants) < 0) goto fail3;
        }
        vec_free(&options); vec_free(&option_at); vec_free(&next); vec_free(&next_at); vec_free(&variants);
        goto step3_done;
    fail3:
        vec_free(&options); vec_free(&option_at); vec_free(&next); vec_free(&next_at); vec_free(&variants);
        goto fail2;
    }
step3_done:
    if (deadline(r) < 0) goto fail2;
    {
        uint8_t *live = malloc((size_t)r->count + 1);
        if (!live) { PyErr_NoMemory(); goto fail2; }
        for (Py_ssize_t rule = 0; rule < r->count; rule++) live[rule] = r->rules[rule].len > 0;
        keep_alternatives(r, live);
        free(live);
    }
    if (deadline(r) < 0) goto fail2;
    if (!r->rules[*start_rule].len) { status = *start_nullable ? 4 : 3; goto fail2; }

    /* 4. unit cycles merged */
    {
        Vec comp_at = {0}, comp = {0}, body = {0};
        if (first_symbol_components(r, 1, &comp_at, &comp) < 0) goto fail4;
        if (deadline(r) < 0) goto fail4;
        for (Py_ssize_t c = 0; c + 1 < comp_at.len; c++) {
            int32_t first = comp_at.data[c], last = comp_at.data[c + 1];
            body.len = 0;
            for (int32_t j = first; j < last; j++) {
                Vec *alts = &r->rules[comp.data[j]];
                for (Py_ssize_t i = 0; i < alts->len; i++) {
                    int32_t id = alts->data[i];
                    if (LEN(r, id) == 1 && SYMS(r, id)[0] < 0) {
                        int member = 0;
                        for (int32_t q = first; q < last; q++) if (comp.data[q] == ~SYMS(r, id)[0]) member = 1;
                        if (member) continue;
                    }
                    if (vec_push(&body, id) < 0) goto fail4;
                }
            }
            if (dedup(r, &body) < 0) goto fail4;
            for (int32_t j = first; j < last; j++) if (vec_copy(&r->rules[comp.data[j]], &body) < 0) goto fail4;
        }
        vec_free(&comp_at); vec_free(&comp); vec_free(&body);
        goto step4_done;
    fail4:
        vec_free(&comp_at); vec_free(&comp); vec_free(&body);
        goto fail2;
    }
step4_done:
    if (reachable_only(r, *start_rule) < 0) goto fail2;
    checked = check_size(r, max_size, peak, too_large);
    if (checked) { status = checked; goto fail2; }

    /* 5. left recursion (Paull's algorithm, inside the components that have it) */
    if (deadline(r) < 0) goto fail2;
    {
        Vec comp_at = {0}, comp = {0}, replaced = {0}, base = {0}, recursive = {0};
        if (first_symbol_components(r, 0, &comp_at, &comp) < 0) goto fail5;
        for (Py_ssize_t c = 0; c + 1 < comp_at.len; c++) {
            int32_t first = comp_at.data[c], last = comp_at.data[c + 1];
            for (int32_t j = first; j < last; j++) {
                int32_t rule = comp.data[j];
                if (deadline(r) < 0) goto fail5;
                for (int32_t e = first; e < j; e++) {
                    int32_t earlier = comp.data[e];
                    replaced.len = 0;
                    for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) {
                        int32_t id = r->rules[rule].data[i];
                        if (LEN(r, id) && SYMS(r, id)[0] == ~earlier) {
                            for (Py_ssize_t h = 0; h < r->rules[earlier].len; h++) {
                                int32_t head = r->rules[earlier].data[h];
                                r->scratch.len = 0;
                                if (vec_reserve(&r->scratch, LEN(r, head) + LEN(r, id)) < 0) goto fail5;
                                memcpy(r->scratch.data, SYMS(r, head), (size_t)LEN(r, head) * sizeof(int32_t));
                                memcpy(r->scratch.data + LEN(r, head), SYMS(r, id) + 1,
                                       (size_t)(LEN(r, id) - 1) * sizeof(int32_t));
                                r->scratch.len = LEN(r, head) + LEN(r, id) - 1;
                                int32_t joined = pool_intern(&r->pool, r->scratch.data, r->scratch.len);
                                if (joined < 0 || vec_push(&replaced, joined) < 0) goto fail5;
                            }
                        } else if (vec_push(&replaced, id) < 0) goto fail5;
                    }
                    if (dedup(r, &replaced) < 0 || vec_copy(&r->rules[rule], &replaced) < 0) goto fail5;
                }
                base.len = 0;
                recursive.len = 0;
                for (Py_ssize_t i = 0; i < r->rules[rule].len; i++) {
                    int32_t id = r->rules[rule].data[i];
                    if (LEN(r, id) && SYMS(r, id)[0] == ~rule) {
                        r->scratch.len = 0;
                        if (vec_reserve(&r->scratch, LEN(r, id)) < 0) goto fail5;
                        memcpy(r->scratch.data, SYMS(r, id) + 1, (size_t)(LEN(r, id) - 1) * sizeof(int32_t));
                        int32_t rest = pool_intern(&r->pool, r->scratch.data, LEN(r, id) - 1);
                        if (rest < 0 || vec_push(&recursive, rest) < 0) goto fail5;
                    } else if (vec_push(&base, id) < 0) goto fail5;
                }
                if (recursive.len) {
                    int32_t rest = new_rule(r, rule, 2);
                    if (rest < 0) goto fail5;
                    for (int pass = 0; pass < 2; pass++) {
                        Vec *from = pass ? &recursive : &base;
                        int32_t into = pass ? rest : rule;
                        r->rules[into].len = 0;
                        for (Py_ssize_t i = 0; i < from->len; i++) if (vec_push(&r->rules[into], from->data[i]) < 0) goto fail5;
                        for (Py_ssize_t i = 0; i < from->len; i++) {
                            int32_t id = from->data[i];
                            r->scratch.len = 0;
                            if (vec_reserve(&r->scratch, LEN(r, id) + 1) < 0) goto fail5;
                            memcpy(r->scratch.data, SYMS(r, id), (size_t)LEN(r, id) * sizeof(int32_t));
                            r->scratch.data[LEN(r, id)] = ~rest;
                            int32_t more = pool_intern(&r->pool, r->scratch.data, LEN(r, id) + 1);
                            if (more < 0 || vec_push(&r->rules[into], more) < 0) goto fail5;
                        }
                    }
                }
                checked = check_size(r, max_size, peak, too_large);
                if (checked) { status = checked; goto fail5_status; }
            }
        }
        vec_free(&comp_at); vec_free(&comp); vec_free(&replaced); vec_free(&base); vec_free(&recursive);
        goto step5_done;
    fail5:
        status = -1;
    fail5_status:
        vec_free(&comp_at); vec_free(&comp); vec_free(&replaced); vec_free(&base); vec_free(&recursive);
        goto fail2;
    }
step5_done:
    status = 0;
fail2:
    vec_free(&out);
    vec_free(&tail_alt);
    vec_free(&nullable);
    return status;
}

static PyObject *rules_out(R *r) {
    PyObject *rules = PyList_New(r->count);
    if (!rules) return NULL;
    for (Py_ssize_t rule = 0; rule < r->count; rule++) {
        Vec *alts = &r->rules[rule];
        PyObject *list = PyList_New(alts->len);
        if (!list) { Py_DECREF(rules); return NULL; }
        PyList_SET_ITEM(rules, rule, list);
        for (Py_ssize_t i = 0; i < alts->len; i++) {
            int32_t id = alts->data[i];
            PyObject *alt = PyTuple_New(LEN(r, id));
            if (!alt) { Py_DECREF(rules); return NULL; }
            for (int32_t k = 0; k < LEN(r, id); k++) {
                PyObject *s = PyLong_FromLong(SYMS(r, id)[k]);
                if (!s) { Py_DECREF(alt); Py_DECREF(rules); return NULL; }
                PyTuple_SET_ITEM(alt, k, s);
            }
            PyList_SET_ITEM(list, i, alt);
        }
    }
    return rules;
}

static PyObject *rewrite(PyObject *self, PyObject *args) {
    PyObject *alternatives, *empty_tuple, *deadline_fn;
    long start;
    Py_ssize_t lexemes, max_size;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "O!lnO!nO|i", &PyList_Type, &alternatives, &start, &lexemes, &PyTuple_Type,
                          &empty_tuple, &max_size, &deadline_fn, &mutation))
        return NULL;
    R r;
    memset(&r, 0, sizeof r);
    r.deadline = deadline_fn;
    r.mutation = mutation;
    r.lexemes = lexemes;
    PyObject *result = NULL;
    uint8_t *empty = NULL;
    Py_ssize_t rules = PyList_GET_SIZE(alternatives);
    if (rules >= INT32_MAX / 4 || lexemes >= INT32_MAX || lexemes < 0) {
        PyErr_SetString(PyExc_OverflowError, "the grammar is too large to rewrite");
        return NULL;
    }
    /* read the rules: each rule's alternatives once (dict.fromkeys) */
    for (Py_ssize_t rule = 0; rule < rules; rule++) {
        if (new_rule(&r, -2, 0) < 0) goto done;
        PyObject *alts = PyList_GET_ITEM(alternatives, rule);
        PyObject *seq = PySequence_Fast(alts, "a rule's alternatives must be a sequence");
        if (!seq) goto done;
        Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *alt = PySequence_Fast_GET_ITEM(seq, i);
            if (!PyTuple_Check(alt)) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_TypeError, "an alternative must be a tuple of ints");
                goto done;
            }
            Py_ssize_t len = PyTuple_GET_SIZE(alt);
            r.scratch.len = 0;
            if (vec_reserve(&r.scratch, len) < 0) { Py_DECREF(seq); goto done; }
            for (Py_ssize_t k = 0; k < len; k++) {
                long s = PyLong_AsLong(PyTuple_GET_ITEM(alt, k));
                if (s == -1 && PyErr_Occurred()) { Py_DECREF(seq); goto done; }
                if (s >= lexemes || s < -(long)rules) {
                    Py_DECREF(seq);
                    PyErr_Format(PyExc_ValueError, "symbol %ld is neither a lexeme nor a rule of the grammar", s);
                    goto done;
                }
                r.scratch.data[r.scratch.len++] = (int32_t)s;
            }
            int32_t id = pool_intern(&r.pool, r.scratch.data, r.scratch.len);
            if (id < 0 || vec_push(&r.rules[rule], id) < 0) { Py_DECREF(seq); goto done; }
        }
        Py_DECREF(seq);
        if (dedup(&r, &r.rules[rule]) < 0) goto done;
    }
    int32_t start_rule;
    if (start >= 0) {  /* a lone lexeme: wrapped in a rule */
        if (start >= lexemes) { PyErr_SetString(PyExc_ValueError, "the start lexeme is not in the grammar"); goto done; }
        int32_t wrap = new_rule(&r, -1, 0);
        int32_t alone = (int32_t)start;
        if (wrap < 0) goto done;
        int32_t id = pool_intern(&r.pool, &alone, 1);
        if (id < 0 || vec_push(&r.rules[wrap], id) < 0) goto done;
        start_rule = wrap;
    } else {
        if (~start >= rules) { PyErr_SetString(PyExc_ValueError, "the start rule is not in the grammar"); goto done; }
        start_rule = (int32_t)~start;
    }
    Py_ssize_t empties = PyTuple_GET_SIZE(empty_tuple);
    if (empties) {
        empty = calloc((size_t)lexemes + 1, 1);
        if (!empty) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t i = 0; i < empties; i++) {
            long lexeme = PyLong_AsLong(PyTuple_GET_ITEM(empty_tuple, i));
            if (lexeme == -1 && PyErr_Occurred()) goto done;
            if (lexeme >= 0 && lexeme < lexemes) empty[lexeme] = 1;
        }
    }
    Py_ssize_t peak = 0, too_large = 0;
    int start_nullable = 0;
    int status = run(&r, &start_rule, max_size, empty, &peak, &too_large, &start_nullable);
    if (status < 0) goto done;
    if (status == 1) { result = Py_BuildValue("(in)", 1, too_large); goto done; }
    if (status == 2 || status == 3) { result = Py_BuildValue("(ii)", status, 0); goto done; }
    {
        PyObject *rules_list = rules_out(&r);
        if (!rules_list) goto done;
        PyObject *news = PyList_New(r.new_source.len);
        if (!news) { Py_DECREF(rules_list); goto done; }
        static const char *suffixes[] = {"start", "\xc2\xb7", "'"};
        for (Py_ssize_t i = 0; i < r.new_source.len; i++) {
            PyObject *item = Py_BuildValue("(is)", r.new_source.data[i], suffixes[r.new_kind.data[i]]);
            if (!item) { Py_DECREF(rules_list); Py_DECREF(news); goto done; }
            PyList_SET_ITEM(news, i, item);
        }
        result = Py_BuildValue("(iNiNNn)", 0, rules_list, start_rule, PyBool_FromLong(start_nullable || status == 4),
                               news, peak);
    }
done:
    free(empty);
    for (Py_ssize_t rule = 0; rule < r.cap; rule++) free(r.rules[rule].data);
    free(r.rules);
    vec_free(&r.pool.sym);
    free(r.pool.start); free(r.pool.len); free(r.pool.hash); free(r.pool.table);
    vec_free(&r.new_source); vec_free(&r.new_kind); vec_free(&r.scratch);
    free(r.stamp);
    return result;
}

static PyMethodDef methods[] = {
    {"rewrite", rewrite, METH_VARARGS, "The parser's rewrite of a grammar (see the file's comment)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rewrite", "The grammar rewrite in C (engine/transform.py).", -1, methods};

PyMODINIT_FUNC PyInit__rewrite(void) { return PyModule_Create(&module); }
