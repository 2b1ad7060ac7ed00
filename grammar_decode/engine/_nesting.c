/* The nesting analysis behind a depth limit (engine/parser_tables.py, _Nesting) in C: each rule's
   fixed change of depth (its net), the check that every alternative of a rule has it, each rule's
   shallowest peak (a least fixed point), and per position of the rewritten grammar's layout the
   net and the least peak of the rest of its alternative. The same worklists in the same order as
   the Python reference (whose docstrings say why each step is there); the Python spends a few µs
   per symbol on it, a large schema's 10-30 ms.

   nesting(symbols, first_at, firsts, lexeme_net, lexeme_peak, deadline)
       symbols: int32 per position (a lexeme >= 0, a rule ~r < 0, END = INT32_MAX), the rules'
       alternatives one after another, rule by rule; first_at (int32, rules + 1) and firsts
       (int32): per rule r the positions its alternatives begin at, firsts[first_at[r]:first_at[r + 1]];
       lexeme_net, lexeme_peak: int64 per lexeme; deadline: called every 1,024 steps (it raises to
       stop). Buffers (numpy arrays or bytes). mutation (tests only, optional): 1 leaves the peaks
       as the pass in dependency order makes them (no worklist after it).
   -> (0, rule_net, known, peak_rest, net_rest): rule_net int64 per rule (bytes), known one byte per
      rule (whether its net is known), peak_rest and net_rest int64 per position (bytes);
      (1, rule): that rule changes the depth by different amounts. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_vec.h"

#define END_SYMBOL INT32_MAX
#define INF ((int64_t)1 << 40)

typedef struct {
    const int32_t *symbols;
    Py_ssize_t positions;
    const int32_t *first_at, *firsts;
    Py_ssize_t rules, alternatives;
    const int64_t *lexeme_net, *lexeme_peak;
    Py_ssize_t lexemes;
    PyObject *deadline;
    int mutation;          /* tests only: 1 skips the worklist after the pass in dependency order */
    Py_ssize_t steps;
    /* derived */
    int32_t *owner;        /* per alternative: its rule */
    int32_t *end;          /* per alternative: the position of its END */
    int32_t *users_at;     /* per rule, CSR into users: the alternatives that read it (once per reading) */
    int32_t *users;
    int64_t *rule_net;
    uint8_t *known;
    int64_t *rule_peak;
} N;

static int tick(N *n) {
    if (++n->steps & 1023) return 0;
    PyObject *out = PyObject_CallNoArgs(n->deadline);
    if (!out) return -1;
    Py_DECREF(out);
    return 0;
}

static inline int64_t symbol_net(N *n, int32_t s) {
    if (s >= 0) return s < n->lexemes ? n->lexeme_net[s] : 0;
    return n->known[~s] ? n->rule_net[~s] : 0;
}

static inline int64_t symbol_peak(N *n, int32_t s) {
    if (s >= 0) return s < n->lexemes ? n->lexeme_peak[s] : 0;
    return n->rule_peak[~s];
}

/* The rest of alternative index from its start, read right to left: max(peak, net + the rest's
   peak); INF where a rule in it has none yet. */
static int64_t rest_peak(N *n, int32_t index) {
    int64_t out = 0;
    int32_t first = n->firsts[index];
    for (int32_t p = n->end[index] - 1; p >= first; p--) {
        int32_t s = n->symbols[p];
        int64_t own = symbol_peak(n, s);
        if (own >= INF) return INF;
        int64_t rest = symbol_net(n, s) + out;
        out = own > rest ? own : rest;
    }
    return out;
}

/* rule's peak lowered to value: the alternatives already evaluated that read it are read again. */
static int lowered(N *n, int32_t rule, int64_t value, const uint8_t *evaluated, Vec *work) {
    n->rule_peak[rule] = value;
    for (int32_t k = n->users_at[rule]; k < n->users_at[rule + 1]; k++)
        if (evaluated[n->users[k]] && vec_push(work, n->users[k]) < 0) return -1;
    return 0;
}

static int analyse(N *n, int32_t *wrong_rule, int64_t *peak_rest, int64_t *net_rest) {
    Py_ssize_t A = n->alternatives, R = n->rules, P = n->positions;
    int status = -1;
    int32_t *unknown = calloc((size_t)A + 1, sizeof(int32_t));
    int32_t *ready = malloc(((size_t)A + P + 1) * sizeof(int32_t));
    uint8_t *evaluated = calloc((size_t)A + 1, 1);
    int32_t *order = malloc(((size_t)R + 1) * sizeof(int32_t));
    uint8_t *state = calloc((size_t)R + 1, 1);
    int32_t *stack_rule = malloc(((size_t)R + 1) * sizeof(int32_t));
    int32_t *stack_at = malloc(((size_t)R + 1) * sizeof(int32_t));
    Vec work = {0};
    if (!unknown || !ready || !evaluated || !order || !state || !stack_rule || !stack_at) { PyErr_NoMemory(); goto done; }

    /* each alternative's rule and end; who reads each rule (in position order) */
    for (Py_ssize_t rule = 0; rule < R; rule++)
        for (int32_t k = n->first_at[rule]; k < n->first_at[rule + 1]; k++) n->owner[k] = (int32_t)rule;
    for (Py_ssize_t a = 0; a < A; a++) {
        int32_t p = n->firsts[a];
        while (p < P && n->symbols[p] != END_SYMBOL) {
            int32_t s = n->symbols[p];
            if (s < 0) { n->users_at[~s + 2]++; unknown[a]++; }
            p++;
        }
        n->end[a] = p;
    }
    for (Py_ssize_t rule = 0; rule < R; rule++) n->users_at[rule + 2] += n->users_at[rule + 1];
    for (Py_ssize_t a = 0; a < A; a++)
        for (int32_t p = n->firsts[a]; p < n->end[a]; p++)
            if (n->symbols[p] < 0) n->users[n->users_at[~n->symbols[p] + 1]++] = (int32_t)a;

    /* each rule's net, from its first alternative whose rules are all known (LIFO, as the reference) */
    Py_ssize_t top = 0;
    for (Py_ssize_t a = 0; a < A; a++) if (!unknown[a]) ready[top++] = (int32_t)a;
    while (top) {
        if (tick(n) < 0) goto done;
        int32_t a = ready[--top], rule = n->owner[a];
        if (n->known[rule]) continue;
        int64_t total = 0;
        for (int32_t p = n->firsts[a]; p < n->end[a]; p++) total += symbol_net(n, n->symbols[p]);
        n->rule_net[rule] = total;
        n->known[rule] = 1;
        for (int32_t k = n->users_at[rule]; k < n->users_at[rule + 1]; k++)
            if (--unknown[n->users[k]] == 0) ready[top++] = n->users[k];
    }
    /* every alternative of a rule changes the depth by the rule's net */
    for (Py_ssize_t a = 0; a < A; a++) {
        int without = 0;
        int64_t total = 0;
        for (int32_t p = n->firsts[a]; p < n->end[a]; p++) {
            int32_t s = n->symbols[p];
            if (s < 0 && !n->known[~s]) without = 1;
            total += symbol_net(n, s);
        }
        int32_t rule = n->owner[a];
        int wrong = without ? n->known[rule] : (!n->known[rule] || total != n->rule_net[rule]);
        if (wrong) { *wrong_rule = rule; status = 1; goto done; }
    }
    if (tick(n) < 0) goto done;

    /* each rule's shallowest peak: rules once each in dependency order, then a worklist */
    Py_ssize_t ordered = 0;
    for (Py_ssize_t root = 0; root < R; root++) {
        if (state[root]) continue;
        state[root] = 1;
        Py_ssize_t depth = 0;
        /* a frame's cursor runs back over the rule's positions (the reference pops the rules it
           reads from the end of their list) */
        stack_rule[depth] = (int32_t)root;
        stack_at[depth++] = n->first_at[root] < n->first_at[root + 1] ? n->end[n->first_at[root + 1] - 1] : 0;
        while (depth) {
            int32_t rule = stack_rule[depth - 1];
            int32_t lowest = n->first_at[rule] < n->first_at[rule + 1] ? n->firsts[n->first_at[rule]] : 0;
            int32_t other = -1;
            while (stack_at[depth - 1] > lowest) {
                int32_t s = n->symbols[--stack_at[depth - 1]];
                if (s < 0) { other = ~s; break; }
            }
            if (other >= 0) {
                if (!state[other]) {
                    state[other] = 1;
                    stack_rule[depth] = other;
                    stack_at[depth++] = n->first_at[other] < n->first_at[other + 1] ? n->end[n->first_at[other + 1] - 1] : 0;
                }
                continue;
            }
            depth--;
            state[rule] = 2;
            order[ordered++] = rule;
        }
    }
    for (Py_ssize_t rule = 0; rule < R; rule++) n->rule_peak[rule] = INF;
    for (Py_ssize_t i = 0; i < ordered; i++) {
        if (tick(n) < 0) goto done;
        int32_t rule = order[i];
        int64_t best = INF;
        for (int32_t a = n->first_at[rule]; a < n->first_at[rule + 1]; a++) {
            evaluated[a] = 1;
            int64_t value = rest_peak(n, a);
            if (value < best) best = value;
        }
        if (best < n->rule_peak[rule] && lowered(n, rule, best, evaluated, &work) < 0) goto done;
    }
    while (work.len && n->mutation != 1) {
        if (tick(n) < 0) goto done;
        int32_t a = work.data[--work.len], rule = n->owner[a];
        int64_t value = rest_peak(n, a);
        if (value < n->rule_peak[rule] && lowered(n, rule, value, evaluated, &work) < 0) goto done;
    }
    /* the rest of each alternative from each position, right to left; 0 at END */
    for (Py_ssize_t p = P - 1; p >= 0; p--) {
        int32_t s = n->symbols[p];
        if (s == END_SYMBOL) { peak_rest[p] = net_rest[p] = 0; continue; }
        int64_t net = symbol_net(n, s), peak = symbol_peak(n, s);
        int64_t next_net = p + 1 < P ? net_rest[p + 1] : 0, next_peak = p + 1 < P ? peak_rest[p + 1] : 0;
        net_rest[p] = net + next_net;
        peak_rest[p] = peak > net + next_peak ? peak : net + next_peak;
    }
    status = 0;
done:
    free(unknown); free(ready); free(evaluated); free(order); free(state); free(stack_rule); free(stack_at); vec_free(&work);
    return status;
}

static PyObject *nesting(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer symbols, first_at, firsts, lexeme_net, lexeme_peak;
    PyObject *deadline;
    int mutation = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*O|i", &symbols, &first_at, &firsts, &lexeme_net, &lexeme_peak, &deadline,
                          &mutation))
        return NULL;
    PyObject *result = NULL;
    N n;
    memset(&n, 0, sizeof n);
    PyObject *net_bytes = NULL, *known_bytes = NULL, *peak_bytes = NULL, *rest_bytes = NULL;
    n.symbols = symbols.buf;
    n.positions = symbols.len / 4;
    n.first_at = first_at.buf;
    n.rules = first_at.len / 4 - 1;
    n.firsts = firsts.buf;
    n.alternatives = firsts.len / 4;
    n.lexeme_net = lexeme_net.buf;
    n.lexeme_peak = lexeme_peak.buf;
    n.lexemes = lexeme_net.len / 8;
    n.deadline = deadline;
    n.mutation = mutation;
    if (n.rules < 0 || lexeme_peak.len != lexeme_net.len || n.positions >= INT32_MAX ||
        (n.rules >= 0 && n.first_at[n.rules] != n.alternatives)) {
        PyErr_SetString(PyExc_ValueError, "the layout's arrays do not fit together");
        goto done;
    }
    for (Py_ssize_t a = 0; a < n.alternatives; a++)
        if (n.firsts[a] < 0 || n.firsts[a] >= n.positions) {
            PyErr_SetString(PyExc_ValueError, "an alternative begins outside the layout");
            goto done;
        }
    for (Py_ssize_t p = 0; p < n.positions; p++) {
        int32_t s = n.symbols[p];
        if (s != END_SYMBOL && (s >= n.lexemes || (s < 0 && ~s >= n.rules))) {
            PyErr_SetString(PyExc_ValueError, "a symbol is neither a lexeme nor a rule of the layout");
            goto done;
        }
    }
    for (Py_ssize_t r = 0; r < n.rules; r++)
        if (n.first_at[r] > n.first_at[r + 1] || n.first_at[r] < 0) {
            PyErr_SetString(PyExc_ValueError, "the rules' offsets are not in order");
            goto done;
        }
    net_bytes = PyBytes_FromStringAndSize(NULL, (n.rules + 1) * 8);
    known_bytes = PyBytes_FromStringAndSize(NULL, n.rules + 1);
    peak_bytes = PyBytes_FromStringAndSize(NULL, (n.positions + 1) * 8);
    rest_bytes = PyBytes_FromStringAndSize(NULL, (n.positions + 1) * 8);
    n.owner = malloc(((size_t)n.alternatives + 1) * sizeof(int32_t));
    n.end = malloc(((size_t)n.alternatives + 1) * sizeof(int32_t));
    n.users_at = calloc((size_t)n.rules + 2, sizeof(int32_t));
    n.users = malloc(((size_t)n.positions + 1) * sizeof(int32_t));
    n.rule_peak = malloc(((size_t)n.rules + 1) * sizeof(int64_t));
    if (!net_bytes || !known_bytes || !peak_bytes || !rest_bytes) goto done;
    if (!n.owner || !n.end || !n.users_at || !n.users || !n.rule_peak) { PyErr_NoMemory(); goto done; }
    n.rule_net = (int64_t *)PyBytes_AS_STRING(net_bytes);
    n.known = (uint8_t *)PyBytes_AS_STRING(known_bytes);
    memset(n.rule_net, 0, (size_t)(n.rules + 1) * 8);
    memset(n.known, 0, (size_t)n.rules + 1);
    int32_t wrong = -1;
    int status = analyse(&n, &wrong, (int64_t *)PyBytes_AS_STRING(peak_bytes), (int64_t *)PyBytes_AS_STRING(rest_bytes));
    if (status < 0) goto done;
    if (status == 1) { result = Py_BuildValue("(ii)", 1, wrong); goto done; }
    /* the arrays without their spare last item */
    if (_PyBytes_Resize(&net_bytes, n.rules * 8) < 0 || _PyBytes_Resize(&known_bytes, n.rules) < 0 ||
        _PyBytes_Resize(&peak_bytes, n.positions * 8) < 0 || _PyBytes_Resize(&rest_bytes, n.positions * 8) < 0)
        goto done;
    result = Py_BuildValue("(iOOOO)", 0, net_bytes, known_bytes, peak_bytes, rest_bytes);
done:
    Py_XDECREF(net_bytes); Py_XDECREF(known_bytes); Py_XDECREF(peak_bytes); Py_XDECREF(rest_bytes);
    free(n.owner); free(n.end); free(n.users_at); free(n.users); free(n.rule_peak);
    PyBuffer_Release(&symbols); PyBuffer_Release(&first_at); PyBuffer_Release(&firsts);
    PyBuffer_Release(&lexeme_net); PyBuffer_Release(&lexeme_peak);
    return result;
}

static PyMethodDef methods[] = {
    {"nesting", nesting, METH_VARARGS, "The nesting analysis of a layout (see the file's comment)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_nesting", "The nesting analysis in C (engine/parser_tables.py).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__nesting(void) { return PyModule_Create(&module); }
