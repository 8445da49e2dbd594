/* The double-dummy solver of skatbus/pimc/solver.py, in C: the same search (alpha-beta over
 * cards, a transposition table at trick starts, equivalent cards, zero-window goal tests),
 * about a hundred times faster, so that PIMC can solve many worlds per decision.
 *
 * One function, root(hands, trick, mover, declarer, null, lo, hi, node_limit, klass, strength,
 * points): for every legal card of the player to move, the declarer's future card points
 * (null: 1 if it takes a trick) searched in the window (lo, hi) -- a value >= hi means "at
 * least hi", <= lo "at most lo". Returns a list of (card, value), or None when the search went
 * over node_limit. The Python solver is the reference: tests/skatbus/test_pimc.py checks both
 * against plain minimax. Built at install time where a C compiler is present (setup.py); the
 * bot falls back to the Python solver where it is not. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef uint32_t u32;

#define TRUMP 4
#define INF (1 << 20)
#define TT_BITS 20
#define TT_SIZE (1u << TT_BITS)

typedef struct {
    u32 h0, h1, h2;
    uint32_t gen;
    int16_t lo, hi;
    uint8_t mover;
} Entry;

static Entry *table = NULL;
static uint32_t generation = 0;
static PyThread_type_lock table_lock = NULL; /* one search at a time uses the table */

typedef struct {
    uint8_t klass[32], strength[32], points[32];
    u32 class_mask[5];
    int by_strength[5][32];
    int by_len[5];
    int declarer, null_game, aborted;
    long long nodes, node_limit;
} Ctx;

static int beats(const Ctx *x, int c, int best) {
    if (x->klass[c] == x->klass[best]) return x->strength[c] > x->strength[best];
    return x->klass[c] == TRUMP;
}

static int trick_winner(const Ctx *x, const int *t) {
    int best = 0;
    for (int i = 1; i < 3; i++)
        if (beats(x, t[i], t[best])) best = i;
    return best;
}

static int points_of(const Ctx *x, u32 m) {
    int total = 0;
    while (m) {
        int c = __builtin_ctz(m);
        total += x->points[c];
        m &= m - 1;
    }
    return total;
}

static u32 legal_of(const Ctx *x, u32 hand, const int *trick, int tlen) {
    if (!tlen) return hand;
    u32 follow = hand & x->class_mask[x->klass[trick[0]]];
    return follow ? follow : hand;
}

/* Representatives of the groups of equivalent legal cards; groups[i] = bit mask of the group. */
static int groups_of(const Ctx *x, const u32 *h, const int *trick, int tlen, int mover, int *reps, u32 *groups) {
    u32 legal = legal_of(x, h[mover], trick, tlen);
    u32 others = (h[0] | h[1] | h[2]) & ~h[mover];
    int n = 0;
    for (int k = 0; k < 5; k++) {
        int in_run = 0, run_points = -1;
        for (int i = 0; i < x->by_len[k]; i++) {
            int c = x->by_strength[k][i];
            u32 bit = 1u << c;
            if (legal & bit) {
                if (in_run && x->points[c] == run_points) {
                    groups[n - 1] |= bit;
                    continue;
                }
                reps[n] = c;
                groups[n] = bit;
                n++;
                in_run = 1;
                run_points = x->points[c];
            } else if (others & bit) {
                in_run = 0;
            }
        }
    }
    return n;
}

static void order_moves(const Ctx *x, const int *trick, int tlen, int mover, int *moves, int n) {
    int key[32];
    int best = -1, best_by = -1;
    if (tlen) {
        int bi = 0;
        for (int i = 1; i < tlen; i++)
            if (beats(x, trick[i], trick[bi])) bi = i;
        best = trick[bi];
        best_by = ((mover - tlen + 3) % 3 + bi) % 3;
    }
    int friend_winning = tlen && ((best_by == x->declarer) == (mover == x->declarer));
    for (int i = 0; i < n; i++) {
        int c = moves[i];
        if (!tlen)
            key[i] = -(x->klass[c] == TRUMP) * 100 - x->strength[c];
        else if (x->null_game)
            key[i] = beats(x, c, best) * 100 - x->strength[c];
        else if (friend_winning)
            key[i] = -x->points[c];
        else if (beats(x, c, best))
            key[i] = (x->klass[c] == TRUMP ? x->points[c] : 0) * 64 + x->strength[c];
        else
            key[i] = 100000 + x->points[c];
    }
    for (int i = 1; i < n; i++) { /* insertion sort: at most ten moves */
        int m = moves[i], k = key[i], j = i - 1;
        while (j >= 0 && key[j] > k) {
            moves[j + 1] = moves[j];
            key[j + 1] = key[j];
            j--;
        }
        moves[j + 1] = m;
        key[j + 1] = k;
    }
}

static int search(Ctx *x, u32 *h, int *trick, int tlen, int mover, int alpha, int beta);

static int after(Ctx *x, u32 *h, int *trick, int tlen, int mover, int alpha, int beta) {
    if (tlen < 3) return search(x, h, trick, tlen, (mover + 1) % 3, alpha, beta);
    int leader = (mover + 1) % 3;
    int winner = (leader + trick_winner(x, trick)) % 3;
    int empty = !(h[0] | h[1] | h[2]);
    int next[3];
    if (x->null_game) {
        if (winner == x->declarer) return 1;
        if (empty) return 0;
        return search(x, h, next, 0, winner, alpha, beta);
    }
    int pts = winner == x->declarer ? x->points[trick[0]] + x->points[trick[1]] + x->points[trick[2]] : 0;
    if (empty) return pts;
    return pts + search(x, h, next, 0, winner, alpha - pts, beta - pts);
}

static int search(Ctx *x, u32 *h, int *trick, int tlen, int mover, int alpha, int beta) {
    if (x->aborted) return 0;
    x->nodes++;
    if ((x->nodes & 1023) == 0 && x->nodes > x->node_limit) {
        x->aborted = 1;
        return 0;
    }
    Entry *e = NULL;
    if (!tlen) {
        if (!x->null_game) {
            int rest = points_of(x, h[0] | h[1] | h[2]);
            if (rest <= alpha) return rest;
            if (beta <= 0) return 0;
        }
        uint64_t hash = ((uint64_t)h[0] * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)h[1] * 0xC2B2AE3D27D4EB4Full) ^
                        ((uint64_t)h[2] * 0x165667B19E3779F9ull) ^ (uint64_t)mover;
        e = &table[(hash >> 17) & (TT_SIZE - 1)];
        if (e->gen == generation && e->h0 == h[0] && e->h1 == h[1] && e->h2 == h[2] && e->mover == mover) {
            int lo = e->lo, hi = e->hi;
            if (lo >= beta || lo == hi) return lo;
            if (hi <= alpha) return hi;
            if (lo > alpha) alpha = lo;
            if (hi < beta) beta = hi;
        }
    }
    int maximizing = (mover == x->declarer) != x->null_game;
    int a0 = alpha, b0 = beta;
    int best = maximizing ? -INF : INF;
    int moves[32];
    u32 groups[32];
    int n = groups_of(x, h, trick, tlen, mover, moves, groups);
    order_moves(x, trick, tlen, mover, moves, n);
    for (int i = 0; i < n; i++) {
        int c = moves[i];
        h[mover] ^= 1u << c;
        trick[tlen] = c;
        int v = after(x, h, trick, tlen + 1, mover, alpha, beta);
        h[mover] ^= 1u << c;
        if (x->aborted) return 0;
        if (maximizing) {
            if (v > best) {
                best = v;
                if (v > alpha) alpha = v;
            }
        } else if (v < best) {
            best = v;
            if (v < beta) beta = v;
        }
        if (alpha >= beta) break;
    }
    if (e != NULL) {
        int lo = -INF, hi = INF;
        if (e->gen == generation && e->h0 == h[0] && e->h1 == h[1] && e->h2 == h[2] && e->mover == mover) {
            lo = e->lo;
            hi = e->hi;
        }
        if (best <= a0) {
            if (best < hi) hi = best;
        } else if (best >= b0) {
            if (best > lo) lo = best;
        } else {
            lo = hi = best;
        }
        if (lo < -30000) lo = -30000;
        if (hi > 30000) hi = 30000;
        e->h0 = h[0];
        e->h1 = h[1];
        e->h2 = h[2];
        e->mover = (uint8_t)mover;
        e->gen = generation;
        e->lo = (int16_t)lo;
        e->hi = (int16_t)hi;
    }
    return best;
}

static int read_bytes32(PyObject *obj, uint8_t *out, const char *what) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return -1;
    if (view.len != 32) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "%s: 32 bytes expected", what);
        return -1;
    }
    memcpy(out, view.buf, 32);
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *root(PyObject *self, PyObject *args) {
    unsigned long h0, h1, h2;
    PyObject *trick_obj, *klass_obj, *strength_obj, *points_obj;
    int mover, declarer, null_game, lo, hi;
    long long node_limit;
    if (!PyArg_ParseTuple(args, "(kkk)OiipiiLOOO", &h0, &h1, &h2, &trick_obj, &mover, &declarer, &null_game, &lo,
                          &hi, &node_limit, &klass_obj, &strength_obj, &points_obj))
        return NULL;
    if (mover < 0 || mover > 2 || declarer < 0 || declarer > 2) {
        PyErr_SetString(PyExc_ValueError, "positions are 0, 1 or 2");
        return NULL;
    }
    Ctx x;
    memset(&x, 0, sizeof x);
    if (read_bytes32(klass_obj, x.klass, "klass") < 0 || read_bytes32(strength_obj, x.strength, "strength") < 0 ||
        read_bytes32(points_obj, x.points, "points") < 0)
        return NULL;
    int trick[3] = {0, 0, 0};
    PyObject *seq = PySequence_Fast(trick_obj, "trick must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t tlen = PySequence_Fast_GET_SIZE(seq);
    if (tlen > 2) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "at most two cards on the table before a move");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < tlen; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (c < 0 || c > 31) {
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "cards are 0..31");
            return NULL;
        }
        trick[i] = (int)c;
    }
    Py_DECREF(seq);
    for (int c = 0; c < 32; c++) {
        if (x.klass[c] > 4) {
            PyErr_SetString(PyExc_ValueError, "classes are 0..4");
            return NULL;
        }
        x.class_mask[x.klass[c]] |= 1u << c;
    }
    for (int k = 0; k < 5; k++) { /* cards of each class, strongest first */
        int n = 0;
        for (int c = 0; c < 32; c++)
            if (x.klass[c] == k) x.by_strength[k][n++] = c;
        for (int i = 1; i < n; i++) {
            int c = x.by_strength[k][i], j = i - 1;
            while (j >= 0 && x.strength[x.by_strength[k][j]] < x.strength[c]) {
                x.by_strength[k][j + 1] = x.by_strength[k][j];
                j--;
            }
            x.by_strength[k][j + 1] = c;
        }
        x.by_len[k] = n;
    }
    x.declarer = declarer;
    x.null_game = null_game;
    x.node_limit = node_limit;
    u32 h[3] = {(u32)h0, (u32)h1, (u32)h2};
    int reps[32];
    u32 groups[32];
    int n = groups_of(&x, h, trick, (int)tlen, mover, reps, groups);
    int values[32];
    int no_memory = 0;
    /* The search runs without the GIL (a bot's event loop keeps running meanwhile); the lock
       keeps two threads' searches off the one table. */
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(table_lock, WAIT_LOCK);
    if (table == NULL) table = (Entry *)PyMem_RawCalloc(TT_SIZE, sizeof(Entry));
    if (table == NULL) {
        no_memory = 1;
    } else {
        generation++;
        if (generation == 0) { /* wrapped: old entries could look current */
            memset(table, 0, TT_SIZE * sizeof(Entry));
            generation = 1;
        }
        for (int i = 0; i < n && !x.aborted; i++) {
            int c = reps[i];
            h[mover] ^= 1u << c;
            trick[tlen] = c;
            values[i] = after(&x, h, trick, (int)tlen + 1, mover, lo, hi);
            h[mover] ^= 1u << c;
        }
    }
    PyThread_release_lock(table_lock);
    Py_END_ALLOW_THREADS
    if (no_memory) return PyErr_NoMemory();
    if (x.aborted) Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        u32 g = groups[i];
        while (g) {
            int c = __builtin_ctz(g);
            g &= g - 1;
            PyObject *pair = Py_BuildValue("(ii)", c, values[i]);
            if (pair == NULL || PyList_Append(out, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(pair);
        }
    }
    return Py_BuildValue("(NL)", out, x.nodes);
}

static PyMethodDef methods[] = {
    {"root", root, METH_VARARGS, "Values of every legal card at the root (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dds", "Double-dummy solver core (C).", -1, methods};

PyMODINIT_FUNC PyInit__dds(void) {
    table_lock = PyThread_allocate_lock();
    if (table_lock == NULL) return PyErr_NoMemory();
    return PyModule_Create(&module);
}
