/* evolver.c -- the public Evolver: a transient (transient.c) behind an edit
 * lock, with a cached freeze().  Mirrors frozenmap/_pycore/evolver.py; see
 * "Transient ownership" in the essay at the top of frozendict.c.
 *
 * Every edit runs under the lock and the busy flag (evolver_begin /
 * evolver_end); the edit itself is a transient_* call, which locates first
 * and writes last (see transient.c).
 */
#include "cfrozenmap.h"
#include "docstrings.h"

/* --- the Evolver --------------------------------------------------------- */

/* The edit lock.  Edits of one Evolver are serialised across threads, on
 * GIL builds too: an edit runs user code (a key's __eq__, a value's
 * __hash__) between locating and writing, and the GIL switches threads
 * there.  An edit from another thread waits (with the GIL released) until
 * the running one ends; an edit from the thread that is already inside one
 * (re-entry from that user code) raises RuntimeError.  The lock is
 * recursive for the thread holding it, so freeze() and a finalizer's edit
 * run while that thread holds it outside an edit's busy phase still work.
 * Reads take no lock: they hold references on the roots instead (see
 * transient_shared_get). */
static int
evolver_lock(evolver_object *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->depth > 0 && self->holder == me) {
        self->depth++;
        return 0;
    }
    if (self->lock == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver is not initialised");
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        PyLockStatus got;
        do {
            Py_BEGIN_ALLOW_THREADS
            got = PyThread_acquire_lock_timed(self->lock, -1, 1);
            Py_END_ALLOW_THREADS
            if (got == PY_LOCK_INTR && Py_MakePendingCalls() < 0) {
                return -1; /* a signal handler raised (KeyboardInterrupt) */
            }
        } while (got != PY_LOCK_ACQUIRED);
    }
    self->holder = me;
    self->depth = 1;
    return 0;
}

static void
evolver_unlock(evolver_object *self)
{
    if (--self->depth == 0) {
        self->holder = 0;
        PyThread_release_lock(self->lock);
    }
}

/* Forget a cached freeze(), releasing it last (its release can run
 * finalizers, which see a consistent evolver). */
static void
evolver_forget_frozen(evolver_object *self)
{
    PyObject *frozen = self->frozen;
    self->frozen = NULL;
    Py_XDECREF(frozen);
}

static int
evolver_begin(evolver_object *self)
{
    if (self->busy && self->depth > 0 && self->holder == PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver edited from inside one of its own edits");
        return -1;
    }
    if (evolver_lock(self) < 0) {
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* End an edit that changed the contents or not (a failed edit changes
 * nothing).  A freeze() cached before the edit, or taken by user code
 * during it, shows the state before it: kept only when that is still the
 * state, so that evolve() ... freeze() with no change returns the source. */
static void
evolver_finish(evolver_object *self, int changed)
{
    self->busy = 0;
    if (changed) {
        self->edits++;
        evolver_forget_frozen(self);
    }
    evolver_unlock(self);
}

static void
evolver_end(evolver_object *self)
{
    evolver_finish(self, 1);
}

/* Install source's contents (a frozendict), then release the old ones: the
 * finalizers that release runs see the new state, never a half-made one.
 * Called with the edit lock held (or on an evolver no one else can see). */
static int
evolver_start(fm_state *st, evolver_object *self, PyObject *source)
{
    transient t;
    if (transient_init_flat_from(st, &t, source) < 0) {
        return -1;
    }
    t.shared = 1;
    if (t.flat != NULL) {
        /* Its own copy of a flat version's values, beside the source's key
         * block (flat_t_own), which neither a GC pass nor a tp_clear of the
         * source can empty: it holds its own references to the keys. */
        fd_object *replaced;
        if (flat_t_own(st, &t, 1, &replaced) < 0) {
            transient_clear(&t);
            return -1;
        }
        Py_XDECREF(replaced);
    }
    transient old = self->t;
    PyObject *old_frozen = self->frozen, *old_origin = self->origin;
    self->t = t;
    self->frozen = Py_IS_TYPE(source, st->frozendict_type) ? Py_NewRef(source) : NULL;
    self->origin = Py_XNewRef(self->frozen);
    transient_clear(&old);
    Py_XDECREF(old_frozen);
    Py_XDECREF(old_origin);
    return 0;
}

/* The fields of a new evolver, before its contents are installed. */
static int
evolver_init_fields(evolver_object *self)
{
    memset(&self->t, 0, sizeof(self->t));
    self->t.root = champ_empty_root();
    self->t.acc_valid = 1; /* the empty map's accumulator is 0 */
    self->t.shared = 1;
    self->busy = 0;
    self->resized = 0;
    self->edits = 0;
    self->frozen = NULL;
    self->origin = NULL;
    self->holder = 0;
    self->depth = 0;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *
evolver_new_from(fm_state *st, PyObject *fd)
{
    evolver_object *self = PyObject_GC_New(evolver_object, st->evolver_type);
    if (self == NULL) {
        return NULL;
    }
    int r = evolver_init_fields(self);
    PyObject_GC_Track(self);
    if (r < 0 || evolver_start(st, self, fd) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *
evolver_tp_new(PyTypeObject *tp, PyObject *args, PyObject *kwds)
{
    evolver_object *self = (evolver_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        return NULL;
    }
    if (evolver_init_fields(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Evolver's one argument, source, given by position or by name (borrowed,
 * NULL when absent), with the same words as the pure core's
 * evolver_source_argument on every Python version (getargs' change with
 * each release): dict's for too many positional arguments, a Python
 * function's for the keywords. */
static int
evolver_source_argument(PyObject *args, PyObject *kwds, PyObject **source)
{
    Py_ssize_t nargs = PyTuple_GET_SIZE(args), pos = 0;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "Evolver expected at most 1 argument, got %zd", nargs);
        return -1;
    }
    *source = nargs == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
    PyObject *name, *value;
    while (kwds != NULL && PyDict_Next(kwds, &pos, &name, &value)) {
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "keywords must be strings");
            return -1;
        }
        if (PyUnicode_CompareWithASCIIString(name, "source") != 0) {
            PyErr_Format(PyExc_TypeError, "Evolver() got an unexpected keyword argument '%U'",
                         name);
            return -1;
        }
        if (*source != NULL) {
            PyErr_SetString(PyExc_TypeError,
                            "Evolver() got multiple values for argument 'source'");
            return -1;
        }
        *source = value;
    }
    return 0;
}

/* Evolver(source): also a clean restart of a live evolver (not from inside
 * one of its own edits: RuntimeError there). */
static int
evolver_tp_init(PyObject *op, PyObject *args, PyObject *kwds)
{
    PyObject *source = NULL;
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = fm_as_evolver(op);
    if (evolver_source_argument(args, kwds, &source) < 0) {
        return -1;
    }
    PyObject *fd;
    if (source == NULL) {
        fd = PyObject_CallNoArgs((PyObject *)st->frozendict_type);
    }
    else if (fm_is_frozendict(st, source)) {
        fd = Py_NewRef(source);
    }
    else {
        /* source may be borrowed from kwds, which its keys() can empty:
         * held while it is read. */
        Py_INCREF(source);
        fd = PyObject_CallOneArg((PyObject *)st->frozendict_type, source);
        Py_DECREF(source);
    }
    if (fd == NULL) {
        return -1;
    }
    int r = -1;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        r = evolver_start(st, self, fd);
        if (r == 0) {
            self->resized++; /* iterators over the old contents stop */
        }
        /* As evolver_end, but keeping the frozen source evolver_start set:
         * it is the evolver's contents now. */
        self->busy = 0;
        self->edits++;
        evolver_unlock(self);
    }
    FM_END_CS();
    Py_DECREF(fd);
    return r;
}

static int
evolver_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(fm_as_evolver(op)->frozen);
    Py_VISIT(fm_as_evolver(op)->origin);
    return transient_traverse(&fm_as_evolver(op)->t, visit, arg);
}

/* tp_clear: empty the evolver completely before releasing anything (the
 * order trie owns the keys and values the key trie borrows; a weakref
 * callback run by the release may find this evolver and read it). */
static int
evolver_tp_clear(PyObject *op)
{
    evolver_object *self = fm_as_evolver(op);
    transient old = self->t;
    PyObject *frozen = self->frozen, *origin = self->origin;
    self->t.root = champ_empty_root(); /* an empty evolver, as Evolver() */
    self->t.order = NULL;
    self->t.flat = NULL;
    self->t.len = 0;
    self->t.next_seq = 0;
    self->t.acc = 0;
    self->t.acc_valid = 1;
    self->frozen = NULL;
    self->origin = NULL;
    self->resized++;
    transient_clear(&old); /* key trie first: it borrows from the order trie */
    Py_XDECREF(frozen);
    Py_XDECREF(origin);
    return 0;
}

static void
evolver_tp_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, evolver_tp_dealloc)
    evolver_tp_clear(op);
    champ_clear(&fm_as_evolver(op)->t.root); /* the empty root tp_clear put there */
    if (fm_as_evolver(op)->lock != NULL) {
        PyThread_free_lock(fm_as_evolver(op)->lock);
        fm_as_evolver(op)->lock = NULL;
    }
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

/* --- reads --------------------------------------------------------------- */

static Py_ssize_t
evolver_tp_length(PyObject *op)
{
    return fm_as_evolver(op)->t.len;
}

static PyObject *
evolver_tp_subscript(PyObject *op, PyObject *key)
{
    PyObject *value;
    fm_lookup r = transient_shared_get(op, &fm_as_evolver(op)->t, key, &value);
    if (r == FM_FOUND) {
        return value;
    }
    if (r == FM_MISSING) {
        fm_set_key_error(key);
    }
    return NULL;
}

static PyObject *
evolver_py_get(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 2)) {
        return fm_wrong_call("get", op, args, nargs, kwnames);
    }
    PyObject *value;
    fm_lookup r = transient_shared_get(op, &fm_as_evolver(op)->t, args[0], &value);
    if (r == FM_FOUND) {
        return value;
    }
    if (r == FM_MISSING) {
        return Py_NewRef(nargs > 1 ? args[1] : Py_None);
    }
    return NULL;
}

static int
evolver_tp_contains(PyObject *op, PyObject *key)
{
    PyObject *value;
    fm_lookup r = transient_shared_get(op, &fm_as_evolver(op)->t, key, &value);
    if (r == FM_FOUND) {
        Py_DECREF(value);
    }
    return r;
}

static PyObject *
evolver_tp_richcompare(PyObject *op, PyObject *other, int cmp)
{
    if (cmp != Py_EQ && cmp != Py_NE) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *r = mapping_equal(fm_state_of_type(Py_TYPE(op)), op, other);
    if (r == NULL || r == Py_NotImplemented || cmp == Py_EQ) {
        return r;
    }
    int truth = r == Py_True;
    Py_DECREF(r);
    return Py_NewRef(truth ? Py_False : Py_True);
}

static PyObject *
evolver_tp_repr(PyObject *op)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *name = PyUnicode_FromString("Evolver");
    if (name == NULL) {
        return NULL;
    }
    PyObject *r = mapping_repr(st, op, name);
    Py_DECREF(name);
    return r;
}

/* dict(self._items()) */
static PyObject *
evolver_as_dict(fm_state *st, PyObject *op)
{
    uint64_t resized;
    order_node *order = mapping_order(st, op, &resized);
    PyObject *d = order_as_dict(order);
    Py_XDECREF(order);
    /* The keys' __hash__ ran: a change meanwhile stops it, as in iteration. */
    if (d != NULL && fm_as_evolver(op)->resized != resized) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver changed size during iteration");
        Py_CLEAR(d);
    }
    return d;
}

static PyObject *
evolver_py_reduce(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__reduce__", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *d = evolver_as_dict(st, op);
    if (d == NULL) {
        return NULL;
    }
    return Py_BuildValue("O(Ns)", st->restore_evolver, d, "c");
}

/* --- edits --------------------------------------------------------------- */

static int
evolver_setitem_locked(fm_state *st, evolver_object *self, PyObject *key, PyObject *value)
{
    if (evolver_begin(self) < 0) {
        return -1;
    }
    Py_ssize_t len = self->t.len;
    fm_edit r = transient_assoc(st, &self->t, key, value);
    if (r != FM_EDIT_FAILED && self->t.len != len) {
        self->resized++;
    }
    evolver_finish(self, r == FM_CHANGED);
    return r == FM_EDIT_FAILED ? -1 : 0;
}

/* transient_dissoc under the edit lock: FM_FOUND removed (*old_value a new
 * ref if wanted), FM_MISSING, FM_ERROR. */
static fm_lookup
evolver_pop_entry_locked(fm_state *st, evolver_object *self, PyObject *key,
                         PyObject **old_value)
{
    if (evolver_begin(self) < 0) {
        return FM_ERROR;
    }
    fm_lookup r = transient_dissoc(st, &self->t, key, old_value);
    if (r == FM_FOUND) {
        self->resized++;
    }
    evolver_finish(self, r == FM_FOUND);
    return r;
}

static int
evolver_tp_ass_subscript(PyObject *op, PyObject *key, PyObject *value)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    int r;
    FM_BEGIN_CS(op);
    if (value != NULL) {
        r = evolver_setitem_locked(st, fm_as_evolver(op), key, value);
    }
    else {
        fm_lookup found = evolver_pop_entry_locked(st, fm_as_evolver(op), key, NULL);
        if (found == FM_MISSING) {
            fm_set_key_error(key);
        }
        r = found == FM_FOUND ? 0 : -1;
    }
    FM_END_CS();
    return r;
}

static PyObject *
evolver_py_set(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 2, 2)) {
        return fm_wrong_call("set", op, args, nargs, kwnames);
    }
    if (evolver_tp_ass_subscript(op, args[0], args[1]) < 0) {
        return NULL;
    }
    return Py_NewRef(op);
}

static PyObject *
evolver_py_discard(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("discard", op, args, nargs, kwnames);
    }
    PyObject *key = args[0];
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    fm_lookup r;
    FM_BEGIN_CS(op);
    r = evolver_pop_entry_locked(st, fm_as_evolver(op), key, NULL);
    FM_END_CS();
    if (r == FM_ERROR) {
        return NULL;
    }
    return Py_NewRef(op);
}

static PyObject *
evolver_py_pop(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 2)) {
        return fm_wrong_call("pop", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *old = NULL;
    fm_lookup r;
    FM_BEGIN_CS(op);
    r = evolver_pop_entry_locked(st, fm_as_evolver(op), args[0], &old);
    FM_END_CS();
    if (r == FM_ERROR) {
        return NULL;
    }
    if (r == FM_FOUND) {
        return old;
    }
    if (nargs > 1) {
        return Py_NewRef(args[1]);
    }
    fm_set_key_error(args[0]);
    return NULL;
}

/* The hash that guides popitem to the last key's entry: 1 and *h, 0 when
 * there is none (its __hash__ raised an Exception, discarded), or -1 with
 * another exception (KeyboardInterrupt, ...).  A key whose hash runs no
 * Python code is hashed without a call. */
static int
evolver_popitem_hint(PyObject *key, Py_uhash_t *h)
{
    if (hashing_pure_key_hash(key, h)) {
        return 1;
    }
    Py_hash_t got = PyObject_Hash(key);
    if (got != -1) {
        *h = (Py_uhash_t)got;
        return 1;
    }
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyErr_Clear();
    return 0;
}

static PyObject *
evolver_py_popitem(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("popitem", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = fm_as_evolver(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    PyObject *k, *v;
    uint64_t seq;
    /* The last item is read under the edit lock: another thread's edit may
     * run until we hold it. */
    if (evolver_begin(self) == 0) {
        if (self->t.flat != NULL) {
            /* Flat mode: the last position.  The key's __hash__ still runs,
             * as it does to guide the trie walk below (the same user
             * calls). */
            Py_ssize_t last = self->t.len - 1;
            if (last < 0) {
                PyErr_SetString(PyExc_KeyError, "popitem(): evolver is empty");
            }
            else {
                PyObject *key = Py_NewRef(fm_flat_keys(self->t.flat)[last].key);
                Py_uhash_t h;
                if (evolver_popitem_hint(key, &h) >= 0
                    && transient_remove_at(st, &self->t, last, &k, &v) == 0) {
                    self->resized++;
                    result = PyTuple_Pack(2, k, v);
                    Py_DECREF(k);
                    Py_DECREF(v);
                }
                Py_DECREF(key);
            }
            evolver_finish(self, result != NULL);
        }
        else if (!order_last(self->t.order, &seq, &k, &v)) {
            PyErr_SetString(PyExc_KeyError, "popitem(): evolver is empty");
            evolver_finish(self, 0);
        }
        else {
            Py_INCREF(k);
            Py_INCREF(v);
            /* The entry holding this key object at this seq (one key object
             * can be stored twice, see champ_find_stored), found by identity
             * along the key's hash path, or by a scan when the hash misleads
             * (changed since the key was stored) or raised an Exception.
             * The key's __hash__ runs under the busy flag and the lock, so
             * the last item and the roots stay as they are. */
            Py_uhash_t h;
            int r = evolver_popitem_hint(k, &h);
            champ_entry *e = r > 0 ? champ_find_stored(self->t.root, &h, k, seq) : NULL;
            if (r >= 0 && e == NULL) {
                e = champ_find_stored(self->t.root, NULL, k, seq);
                if (e == NULL) {
                    PyErr_SetString(PyExc_SystemError, "popitem: tries disagree");
                    r = -1;
                }
            }
            if (r >= 0 && transient_remove_entry(st, &self->t, e, NULL, NULL) == 0) {
                self->resized++;
                result = PyTuple_Pack(2, k, v);
            }
            evolver_finish(self, result != NULL);
            Py_DECREF(k);
            Py_DECREF(v);
        }
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_py_setdefault(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 2)) {
        return fm_wrong_call("setdefault", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = fm_as_evolver(op);
    PyObject *key = args[0], *dflt = nargs > 1 ? args[1] : Py_None;
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        Py_uhash_t h;
        champ_entry *e = NULL;
        Py_ssize_t index;
        fm_lookup r;
        if (self->t.flat == NULL) {
            r = transient_lookup(&self->t, key, &h, &e);
        }
        else {
            r = hashing_key_hash_fast(key, &h) < 0 ? FM_ERROR
                                                   : flat_t_find(&self->t, h, key, &index);
        }
        if (r == FM_FOUND) {
            result = Py_NewRef(e != NULL ? e->value : fm_flat_values(self->t.flat)[index]);
        }
        else if (r == FM_MISSING) {
            Py_uhash_t acc = self->t.acc;
            int acc_valid = self->t.acc_valid;
            if (hashing_acc_replace(&acc, &acc_valid, h, NULL, dflt) == 0
                && transient_put_new(st, &self->t, h, key, dflt) == 0) {
                self->t.acc = acc;
                self->t.acc_valid = acc_valid;
                self->resized++;
                result = Py_NewRef(dflt);
            }
        }
        evolver_end(self);
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_py_update(PyObject *op, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) > 1) {
        return fm_wrong_call_tuple("update", op, args, kwargs);
    }
    PyObject *arg = PyTuple_GET_SIZE(args) == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = fm_as_evolver(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        transient saved = self->t;
        if (saved.root != NULL) {
            champ_incref(saved.root);
        }
        Py_XINCREF(saved.order); /* and so the merge copies what it edits */
        Py_XINCREF(saved.flat);
        int changed = 0;
        if (merge_into(st, &self->t, arg, kwargs, NULL, NULL) < 0) {
            /* Roll back: put the saved state in place first, then release
             * the partial merge (finalizers see the state before update). */
            transient partial = self->t;
            self->t = saved;
            transient_clear(&partial);
        }
        else {
            if (self->t.len != saved.len || self->t.next_seq != saved.next_seq) {
                self->resized++;
            }
            /* The saved references made every change copy its root. */
            changed = self->t.root != saved.root || self->t.order != saved.order
                      || self->t.flat != saved.flat;
            transient_clear(&saved);
            result = Py_NewRef(Py_None);
        }
        evolver_finish(self, changed);
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_py_clear(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("clear", op, args, nargs, kwnames);
    }
    evolver_object *self = fm_as_evolver(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        if (self->t.len) {
            self->resized++;
        }
        champ_node *old_root = self->t.root;
        order_node *old_order = self->t.order;
        fd_object *old_flat = self->t.flat;
        self->t.root = champ_empty_root();
        self->t.order = NULL;
        self->t.flat = NULL;
        self->t.len = 0;
        self->t.acc = 0;
        self->t.acc_valid = 1;
        Py_XDECREF(old_order); /* may run finalizers: state is consistent */
        Py_XDECREF(old_flat);
        champ_xdecref(old_root);
        result = Py_NewRef(Py_None);
        evolver_end(self);
    }
    FM_END_CS();
    return result;
}

/* freeze(): waits for an edit running in another thread (as the pure
 * core's lock does); from inside an edit of this thread it publishes the
 * state before that edit, and evolver_end then forgets it. */
/* Whether the tries root hold the very entries of the version origin (in
 * tries, or a table version: its twin's). */
static int
evolver_same_tries(fd_object *origin, champ_node *root)
{
    if (fm_is_table(origin)) {
        fd_object *twin = table_twin_if_built(origin);
        return twin != NULL && champ_identical(twin->root, root);
    }
    return champ_identical(origin->root, root);
}

static PyObject *
evolver_py_freeze(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("freeze", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = fm_as_evolver(op);
    PyObject *r = NULL, *stale = NULL;
    FM_BEGIN_CS(op);
    if (evolver_lock(self) == 0) {
        if (self->frozen != NULL && fm_as_fd(self->frozen)->len != self->t.len) {
            /* The GC cleared the cached version (a cleared frozendict is an
             * empty one), not this evolver: published again below. */
            stale = self->frozen;
            self->frozen = NULL;
        }
        r = Py_XNewRef(self->frozen);
        fd_object *origin = (fd_object *)self->origin;
        if (r == NULL && origin != NULL && origin->len == self->t.len
            && (self->t.flat != NULL ? flat_t_same_items(origin, &self->t)
                : fm_is_flat(origin) ? flat_same_items(origin, self->t.root, self->t.len)
                                     : evolver_same_tries(origin, self->t.root))) {
            /* Edits that cancel out: the last version published is still
             * the contents (the walk visits only what the edits copied). */
            r = Py_NewRef(self->origin);
            if (!self->busy) {
                self->frozen = Py_NewRef(r);
            }
        }
        if (r == NULL) {
            uint64_t edits = self->edits;
            int busy = self->busy;
            /* (flat: a copy of the values beside the evolver's key block,
             * which later edits of the keys then copy first) */
            r = transient_publish(st, &self->t, st->frozendict_type);
            /* Cache it unless a finalizer run by the allocation edited or
             * froze the evolver meanwhile. */
            if (r != NULL && !busy && self->edits == edits && self->frozen == NULL) {
                self->frozen = Py_NewRef(r);
                Py_XSETREF(self->origin, Py_NewRef(r));
            }
        }
        evolver_unlock(self);
    }
    FM_END_CS();
    Py_XDECREF(stale);
    return r;
}

static PyObject *
evolver_py_copy(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("copy", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *fd = evolver_py_freeze(op, NULL, 0, NULL);
    if (fd == NULL) {
        return NULL;
    }
    PyObject *r = evolver_new_from(st, fd);
    Py_DECREF(fd);
    return r;
}

static PyObject *
evolver_call_on_frozen(PyObject *op, const char *name)
{
    PyObject *fd = evolver_py_freeze(op, NULL, 0, NULL);
    if (fd == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(fd, name, NULL);
    Py_DECREF(fd);
    return r;
}

static PyObject *
evolver_py_check(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_check");
}

static PyObject *
evolver_py_node_ids(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_node_ids");
}

static PyObject *
evolver_py_dump(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_dump");
}

/* --- positions: read from freeze() (O(1)), a snapshot no edit changes ---- */

typedef enum {
    EVOLVER_KEY_AT,
    EVOLVER_VALUE_AT,
    EVOLVER_ITEM_AT,
    EVOLVER_INDEX,
    EVOLVER_SLICE
} evolver_positional;

/* The positional read `what` of a freeze(), as the frozendict method of the
 * same name with "Evolver" in its messages: arg is the index, the key or
 * the slice's start; stop the slice's stop. */
static PyObject *
evolver_read_frozen(PyObject *op, evolver_positional what, PyObject *arg, PyObject *stop)
{
    PyObject *frozen = evolver_py_freeze(op, NULL, 0, NULL);
    if (frozen == NULL) {
        return NULL;
    }
    fd_object *fd = fm_as_fd(frozen);
    PyObject *r = NULL;
    switch (what) {
    case EVOLVER_KEY_AT:
        r = position_at(fd, arg, "Evolver", FM_POSITION_KEY);
        break;
    case EVOLVER_VALUE_AT:
        r = position_at(fd, arg, "Evolver", FM_POSITION_VALUE);
        break;
    case EVOLVER_ITEM_AT:
        r = position_at(fd, arg, "Evolver", FM_POSITION_ITEM);
        break;
    case EVOLVER_INDEX:
        r = position_of(fd, arg);
        break;
    case EVOLVER_SLICE:
        r = position_slice(fm_state_of_type(Py_TYPE(op)), frozen, arg, stop);
        break;
    }
    Py_DECREF(frozen);
    return r;
}

static PyObject *
evolver_py_key_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("key_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return evolver_read_frozen(op, EVOLVER_KEY_AT, index, NULL);
}

static PyObject *
evolver_py_value_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("value_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return evolver_read_frozen(op, EVOLVER_VALUE_AT, index, NULL);
}

static PyObject *
evolver_py_item_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("item_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return evolver_read_frozen(op, EVOLVER_ITEM_AT, index, NULL);
}

static PyObject *
evolver_py_index(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("index", op, args, nargs, kwnames);
    }
    PyObject *key = args[0];
    return evolver_read_frozen(op, EVOLVER_INDEX, key, NULL);
}

static PyObject *
evolver_py_slice(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 2)) {
        return fm_wrong_call("slice", op, args, nargs, kwnames);
    }
    return evolver_read_frozen(op, EVOLVER_SLICE, nargs > 0 ? args[0] : Py_None,
                               nargs > 1 ? args[1] : Py_None);
}

/* Evolver[K, V], for typing. */
static PyObject *
evolver_py_class_getitem(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("__class_getitem__", cls, args, nargs, kwnames);
    }
    return Py_GenericAlias(cls, args[0]);
}

/* keys(), values(), items(), reversed(): what frozendict's methods make
 * (views.c), with the Evolver's wording of a wrong call (frozendict's is the
 * builtin's). */
static PyObject *
evolver_py_keys(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("keys", op, args, nargs, kwnames);
    }
    return view_mapping_py_keys(op, NULL);
}

static PyObject *
evolver_py_reversed(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__reversed__", op, args, nargs, kwnames);
    }
    return view_mapping_py_reversed(op, NULL);
}

static PyObject *
evolver_py_values(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("values", op, args, nargs, kwnames);
    }
    return view_mapping_py_values(op, NULL);
}

static PyObject *
evolver_py_items(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("items", op, args, nargs, kwnames);
    }
    return view_mapping_py_items(op, NULL);
}

static PyMethodDef evolver_methods[] = {
    {"get", (PyCFunction)(void (*)(void))evolver_py_get, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_GET},
    {"keys", (PyCFunction)(void (*)(void))evolver_py_keys, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_KEYS},
    {"values", (PyCFunction)(void (*)(void))evolver_py_values, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_VALUES},
    {"items", (PyCFunction)(void (*)(void))evolver_py_items, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_ITEMS},
    {"__reversed__", (PyCFunction)(void (*)(void))evolver_py_reversed,
     METH_FASTCALL | METH_KEYWORDS, EV_DOC_DUNDER_REVERSED},
    {"__reduce__", (PyCFunction)(void (*)(void))evolver_py_reduce,
     METH_FASTCALL | METH_KEYWORDS, EV_DOC_DUNDER_REDUCE},
    {"set", (PyCFunction)(void (*)(void))evolver_py_set, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_SET},
    {"discard", (PyCFunction)(void (*)(void))evolver_py_discard, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_DISCARD},
    {"pop", (PyCFunction)(void (*)(void))evolver_py_pop, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_POP},
    {"popitem", (PyCFunction)(void (*)(void))evolver_py_popitem, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_POPITEM},
    {"setdefault", (PyCFunction)(void (*)(void))evolver_py_setdefault,
     METH_FASTCALL | METH_KEYWORDS, EV_DOC_SETDEFAULT},
    {"update", (PyCFunction)(void (*)(void))evolver_py_update, METH_VARARGS | METH_KEYWORDS,
     EV_DOC_UPDATE},
    {"clear", (PyCFunction)(void (*)(void))evolver_py_clear, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_CLEAR},
    {"get_in", (PyCFunction)(void (*)(void))path_py_get_in, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_GET_IN},
    {"set_in", (PyCFunction)(void (*)(void))path_py_set_in, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_SET_IN},
    {"update_in", (PyCFunction)(void (*)(void))path_py_update_in, METH_VARARGS | METH_KEYWORDS,
     EV_DOC_UPDATE_IN},
    {"delete_in", (PyCFunction)(void (*)(void))path_py_delete_in,
     METH_FASTCALL | METH_KEYWORDS, EV_DOC_DELETE_IN},
    {"copy", (PyCFunction)(void (*)(void))evolver_py_copy, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_COPY},
    {"freeze", (PyCFunction)(void (*)(void))evolver_py_freeze, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_FREEZE},
    {"key_at", (PyCFunction)(void (*)(void))evolver_py_key_at, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_KEY_AT},
    {"value_at", (PyCFunction)(void (*)(void))evolver_py_value_at,
     METH_FASTCALL | METH_KEYWORDS, EV_DOC_VALUE_AT},
    {"item_at", (PyCFunction)(void (*)(void))evolver_py_item_at, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_ITEM_AT},
    {"index", (PyCFunction)(void (*)(void))evolver_py_index, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_INDEX},
    {"slice", (PyCFunction)(void (*)(void))evolver_py_slice, METH_FASTCALL | METH_KEYWORDS,
     EV_DOC_SLICE},
    {"_check", evolver_py_check, METH_NOARGS,
     "Assert every invariant of the evolver's current contents."},
    {"_node_ids", evolver_py_node_ids, METH_NOARGS, NULL},
    {"_dump", evolver_py_dump, METH_NOARGS, NULL},
    {"__class_getitem__", (PyCFunction)(void (*)(void))evolver_py_class_getitem,
     METH_FASTCALL | METH_KEYWORDS | METH_CLASS, EV_DOC_DUNDER_CLASS_GETITEM},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot evolver_slots[] = {
    {Py_tp_new, evolver_tp_new},
    {Py_tp_init, evolver_tp_init},
    {Py_tp_dealloc, evolver_tp_dealloc},
    {Py_tp_traverse, evolver_tp_traverse},
    {Py_tp_clear, evolver_tp_clear},
    {Py_tp_repr, evolver_tp_repr},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_richcompare, evolver_tp_richcompare},
    {Py_tp_iter, view_mapping_tp_iter},
    {Py_tp_methods, evolver_methods},
    {Py_mp_length, evolver_tp_length},
    {Py_mp_subscript, evolver_tp_subscript},
    {Py_mp_ass_subscript, evolver_tp_ass_subscript},
    {Py_sq_contains, evolver_tp_contains},
    {Py_tp_doc, EV_DOC_TYPE},
    {0, NULL},
};

PyType_Spec evolver_spec = {
    .name = "frozenmap.Evolver",
    .basicsize = sizeof(evolver_object),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_MAPPING,
    .slots = evolver_slots,
};
