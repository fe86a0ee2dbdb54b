/* views.c -- keys/values/items views and the iterator over a frozendict or
 * an Evolver.  Mirrors frozenmap/_pycore/views.py.
 *
 * The keys and items views are set-like: their set operations and
 * comparisons are frozenmap._viewsets.ViewSetOps's methods called on the view
 * (the pure core's views inherit that class), which follow dict's views step
 * for step, so both cores give dict's results and exceptions; the views are
 * registered as KeysView/ItemsView/ValuesView.  Iteration walks the order trie with an order_cursor (a flat
 * frozendict's entries by position): no lookups, no user code.
 */
#include "cfrozenmap.h"
#include "docstrings.h"

enum { VIEW_KEYS = 0, VIEW_VALUES = 1, VIEW_ITEMS = 2 };

typedef struct {
    PyObject_HEAD
    PyObject *mapping; /* a frozendict or an Evolver; never NULL (no tp_clear) */
} view_object;

typedef struct {
    PyObject_HEAD
    order_node *order; /* the root being walked (keeps the items alive) */
    PyObject *flat;    /* or the flat frozendict walked (by remaining), or NULL */
    PyObject *table;   /* or the table version walked forwards, or NULL, */
    PyObject *inner;   /* through its dict's own iterator (out of the GC's lists) */
    PyObject *evolver; /* the Evolver iterated, or NULL */
    uint64_t resized;
    Py_ssize_t remaining;
    int kind;
    PyObject *result; /* items: the last tuple, reused while unshared */
    order_cursor cursor;
} iter_object;

/* The object as a view / a view iterator (the caller knows it is one). */
static inline view_object *
view_of(PyObject *op)
{
    return (view_object *)op;
}
static inline iter_object *
view_iter_of(PyObject *op)
{
    return (iter_object *)op;
}

/* --- iterator ------------------------------------------------------------ */

/* An iterator over a frozendict's or an Evolver's items in (reverse) order
 * yielding keys, values or items.  Evolver iterators also watch the resized
 * counter.  New ref or NULL. */
static PyObject *
view_iter_new(fm_state *st, PyObject *mapping, int kind, int reverse)
{
    uint64_t resized = 0;
    order_node *order = NULL;
    PyObject *flat = NULL, *table = NULL, *inner = NULL;
    if (fm_is_frozendict(st, mapping) && fm_is_flat(fm_as_fd(mapping))) {
        flat = Py_NewRef(mapping); /* walked in place: its entries never change */
    }
    else if (fm_is_frozendict(st, mapping) && fm_is_table(fm_as_fd(mapping)) && !reverse) {
        /* Its dict's own iterator, which never shows the dict: held by this
         * iterator only, untracked (this one's traverse visits the version,
         * whose traverse visits the dict's items). */
        PyObject *dict = fm_as_fd(mapping)->table, *view = NULL;
        if (kind == VIEW_KEYS) {
            inner = PyObject_GetIter(dict);
        }
        else {
            view = PyObject_CallMethod(dict, kind == VIEW_VALUES ? "values" : "items", NULL);
            inner = view != NULL ? PyObject_GetIter(view) : NULL;
            Py_XDECREF(view);
        }
        if (inner == NULL) {
            return NULL;
        }
        PyObject_GC_UnTrack(inner); /* (tracked again before it goes) */
        table = Py_NewRef(mapping);
    }
    else {
        order = mapping_order(st, mapping, &resized);
        if (order == NULL && PyErr_Occurred()) {
            return NULL;
        }
    }
    iter_object *it = PyObject_GC_New(iter_object, st->iter_type);
    if (it == NULL) {
        Py_XDECREF(order);
        Py_XDECREF(flat);
        Py_XDECREF(table);
        if (inner != NULL) {
            PyObject_GC_Track(inner);
            Py_DECREF(inner);
        }
        return NULL;
    }
    it->flat = flat;
    it->table = table;
    it->inner = inner;
    it->kind = kind;
    it->result = NULL;
    it->evolver = NULL;
    it->resized = resized;
    it->order = order;
    it->remaining = mapping_len(st, mapping);
    if (!fm_is_frozendict(st, mapping)) {
        it->evolver = Py_NewRef(mapping);
    }
    order_cursor_init(&it->cursor, it->order, reverse);
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

static PyObject *
view_iter_select(int kind, PyObject *k, PyObject *v)
{
    switch (kind) {
    case VIEW_KEYS:
        return Py_NewRef(k);
    case VIEW_VALUES:
        return Py_NewRef(v);
    default:
        return PyTuple_Pack(2, k, v);
    }
}

/* Whether the Evolver iterated changed size (RuntimeError set): checked
 * before each step and not consumed, so every later call raises too, as
 * dict's iterators do, until the walk has reached its end. */
static int
view_iter_stale(iter_object *it)
{
    if (it->evolver != NULL && it->cursor.depth >= 0
        && fm_as_evolver(it->evolver)->resized != it->resized) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver changed size during iteration");
        return 1;
    }
    return 0;
}

/* The next (key, value) (borrowed) of a flat walk that has remaining items
 * left: 1, or 0 at the end. */
static int
view_iter_flat_next(iter_object *it, Py_ssize_t *remaining, PyObject **k, PyObject **v)
{
    fd_object *fd = fm_as_fd(it->flat);
    /* (A frozendict cleared by the GC together with this iterator is empty.) */
    if (*remaining <= 0 || *remaining > fd->len) {
        return 0;
    }
    Py_ssize_t i = it->cursor.reverse ? *remaining - 1 : fd->len - *remaining;
    *k = fm_flat_keys(fd)[i].key;
    *v = fm_flat_values(fd)[i];
    (*remaining)--;
    return 1;
}

static PyObject *
view_iter_tp_next(PyObject *op)
{
    iter_object *it = view_iter_of(op);
    PyObject *k, *v;
    if (it->inner != NULL) {
        /* the dict's iterator gives what this one gives (an items
         * iterator reuses its tuple, as below) */
        PyObject *next = it->remaining > 0 ? Py_TYPE(it->inner)->tp_iternext(it->inner) : NULL;
        if (next != NULL) {
            it->remaining--;
        }
        return next;
    }
    if (it->flat != NULL) {
        if (!view_iter_flat_next(it, &it->remaining, &k, &v)) {
            return NULL;
        }
    }
    else {
        if (view_iter_stale(it)) {
            return NULL;
        }
        if (!order_cursor_next(&it->cursor, &k, &v)) {
            return NULL;
        }
        it->remaining--;
    }
    if (it->kind == VIEW_ITEMS) {
        /* C-only fast path (dict's items iterator does the same): when the
         * caller let go of the previous tuple, refill it instead of
         * allocating a new one. */
        PyObject *t = it->result;
        /* Not on free-threaded builds, where a plain refcount read does not
         * prove the tuple unshared. */
        if (!FM_FREE_THREADED && t != NULL && Py_REFCNT(t) == 1) {
            PyObject *ok = PyTuple_GET_ITEM(t, 0), *ov = PyTuple_GET_ITEM(t, 1);
            PyTuple_SET_ITEM(t, 0, Py_NewRef(k));
            PyTuple_SET_ITEM(t, 1, Py_NewRef(v));
            Py_INCREF(t);
            Py_DECREF(ok);
            Py_DECREF(ov);
#if PY_VERSION_HEX >= 0x030E0000
            /* 3.14+ tuples cache their hash: forget the previous pair's, or
             * set(...).difference_update(fd.items()) tests stale hashes
             * (dict's iterator does the same in _PyTuple_Recycle). */
            ((PyTupleObject *)t)->ob_hash = -1;
#endif
            /* The GC may have untracked it while it held atoms only. */
            if (!PyObject_GC_IsTracked(t)) {
                PyObject_GC_Track(t);
            }
            return t;
        }
        t = PyTuple_Pack(2, k, v);
        if (t == NULL) {
            return NULL;
        }
        Py_XSETREF(it->result, Py_NewRef(t));
        return t;
    }
    return view_iter_select(it->kind, k, v);
}

static PyObject *
view_iter_py_length_hint(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__length_hint__", op, args, nargs, kwnames);
    }
    Py_ssize_t n = view_iter_of(op)->remaining;
    return PyLong_FromSsize_t(n > 0 ? n : 0);
}

static PyObject *
view_iter_py_reduce(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__reduce__", op, args, nargs, kwnames);
    }
    iter_object *it = view_iter_of(op);
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    if (view_iter_stale(it)) { /* as next() would (and dict's __reduce__) */
        return NULL;
    }
    if (it->inner != NULL) {
        /* the dict iterator's own reduction: (iter, (rest,)), not consumed */
        PyObject *reduced = PyObject_CallMethod(it->inner, "__reduce__", NULL);
        if (reduced == NULL) {
            return NULL;
        }
        PyObject *args = PyTuple_Check(reduced) && PyTuple_GET_SIZE(reduced) >= 2
                             ? PyTuple_GET_ITEM(reduced, 1)
                             : NULL;
        PyObject *rest = args != NULL && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1
                             ? PyTuple_GET_ITEM(args, 0)
                             : NULL;
        PyObject *r = rest != NULL ? Py_BuildValue("O(O)", st->builtin_iter, rest) : NULL;
        if (rest == NULL) {
            PyErr_SetString(PyExc_SystemError, "a dict iterator reduced unexpectedly");
        }
        Py_DECREF(reduced);
        return r;
    }
    order_cursor copy = it->cursor; /* pickling does not consume it */
    Py_ssize_t remaining = it->remaining;
    PyObject *rest = PyList_New(0), *k, *v;
    if (rest == NULL) {
        return NULL;
    }
    while (it->flat != NULL ? view_iter_flat_next(it, &remaining, &k, &v)
                            : order_cursor_next(&copy, &k, &v)) {
        PyObject *x = view_iter_select(it->kind, k, v);
        if (x == NULL || PyList_Append(rest, x) < 0) {
            Py_XDECREF(x);
            Py_DECREF(rest);
            return NULL;
        }
        Py_DECREF(x);
    }
    return Py_BuildValue("O(N)", st->builtin_iter, rest);
}

static int
view_iter_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(view_iter_of(op)->order);
    Py_VISIT(view_iter_of(op)->flat);
    Py_VISIT(view_iter_of(op)->table);
    Py_VISIT(view_iter_of(op)->evolver);
    Py_VISIT(view_iter_of(op)->result);
    return 0;
}

static int
view_iter_tp_clear(PyObject *op)
{
    /* Exhaust the cursor before releasing the root it walks: a weakref
     * callback run by the release may call next() on this iterator. */
    iter_object *it = view_iter_of(op);
    it->cursor.depth = -1;
    it->remaining = 0;
    Py_CLEAR(it->order);
    Py_CLEAR(it->flat);
    PyObject *inner = it->inner;
    it->inner = NULL;
    if (inner != NULL) {
        /* (its deallocator untracks it unchecked: tracked again first) */
        if (!PyObject_GC_IsTracked(inner)) {
            PyObject_GC_Track(inner);
        }
        Py_DECREF(inner);
    }
    Py_CLEAR(it->table);
    Py_CLEAR(it->evolver);
    Py_CLEAR(it->result);
    return 0;
}

/* The trashcan: releasing an iterator releases the root it walks, whose
 * items may be iterators over other roots, and so on (a chain of any
 * length): each link would be a C stack frame without it. */
static void
view_iter_tp_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, view_iter_tp_dealloc)
    view_iter_tp_clear(op);
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

static PyMethodDef view_iter_methods[] = {
    {"__length_hint__", (PyCFunction)(void (*)(void))view_iter_py_length_hint,
     METH_FASTCALL | METH_KEYWORDS, ITER_DOC_DUNDER_LENGTH_HINT},
    {"__reduce__", (PyCFunction)(void (*)(void))view_iter_py_reduce,
     METH_FASTCALL | METH_KEYWORDS, ITER_DOC_DUNDER_REDUCE},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot view_iter_slots[] = {
    {Py_tp_dealloc, view_iter_tp_dealloc},
    {Py_tp_traverse, view_iter_tp_traverse},
    {Py_tp_clear, view_iter_tp_clear},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, view_iter_tp_next},
    {Py_tp_methods, view_iter_methods},
    {Py_tp_doc, "An iterator over keys, values or items, forward or reversed."},
    {0, NULL},
};

PyType_Spec view_iter_spec = {
    .name = "frozenmap.frozendict_iterator",
    .basicsize = sizeof(iter_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = view_iter_slots,
};

/* --- views --------------------------------------------------------------- */

/* A keys/values/items view of a frozendict or an Evolver: new ref or NULL. */
static PyObject *
view_new(fm_state *st, PyObject *mapping, int kind)
{
    PyTypeObject *tp = kind == VIEW_KEYS     ? st->keys_type
                       : kind == VIEW_VALUES ? st->values_type
                                             : st->items_type;
    view_object *v = PyObject_GC_New(view_object, tp);
    if (v == NULL) {
        return NULL;
    }
    v->mapping = Py_NewRef(mapping);
    PyObject_GC_Track(v);
    return (PyObject *)v;
}

static int
view_kind(fm_state *st, PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    return tp == st->keys_type ? VIEW_KEYS : tp == st->values_type ? VIEW_VALUES : VIEW_ITEMS;
}

static Py_ssize_t
view_tp_length(PyObject *op)
{
    /* The stored length: a subclass's __len__ is never consulted. */
    return mapping_len(fm_state_of_type(Py_TYPE(op)), view_of(op)->mapping);
}

static PyObject *
view_tp_iter(PyObject *op)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    return view_iter_new(st, view_of(op)->mapping, view_kind(st, op), 0);
}

static PyObject *
view_py_reversed(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__reversed__", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    return view_iter_new(st, view_of(op)->mapping, view_kind(st, op), 1);
}

static PyObject *
view_py_mapping(PyObject *op, void *closure)
{
    return PyDictProxy_New(view_of(op)->mapping);
}

static PyObject *
view_tp_repr(PyObject *op)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    int kind = view_kind(st, op);
    PyObject *list = PySequence_List(op);
    if (list == NULL) {
        return NULL;
    }
    PyObject *r = PyUnicode_FromFormat(kind == VIEW_KEYS     ? "dict_keys(%R)"
                                       : kind == VIEW_VALUES ? "dict_values(%R)"
                                                             : "dict_items(%R)",
                                       list);
    Py_DECREF(list);
    return r;
}

static int
view_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(view_of(op)->mapping);
    return 0;
}

/* No tp_clear, as CPython's dict views have none: a view holds nothing but
 * its mapping, a frozendict or an Evolver (or a subclass instance), so every
 * reference cycle through a view also passes through that mapping, whose
 * own tp_clear breaks it.  A view found after a collection therefore still
 * has its mapping -- emptied, a valid empty map -- and every method works.
 * The trashcan: a view releases its mapping, which may hold views of other
 * mappings, and so on. */
static void
view_tp_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, view_tp_dealloc)
    Py_DECREF(view_of(op)->mapping);
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

static int
view_keys_tp_contains(PyObject *op, PyObject *key)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *value;
    PyObject *mapping = Py_NewRef(view_of(op)->mapping);
    fm_lookup r = mapping_get(st, mapping, key, &value);
    if (r == FM_FOUND) {
        Py_DECREF(value);
    }
    Py_DECREF(mapping);
    return r;
}

static int
view_items_tp_contains(PyObject *op, PyObject *item)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *value;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
        return 0;
    }
    Py_INCREF(item); /* its parts are used after user code runs */
    PyObject *mapping = Py_NewRef(view_of(op)->mapping);
    fm_lookup r = mapping_get(st, mapping, PyTuple_GET_ITEM(item, 0), &value);
    if (r == FM_FOUND) {
        r = PyObject_RichCompareBool(value, PyTuple_GET_ITEM(item, 1), Py_EQ);
        Py_DECREF(value);
    }
    Py_DECREF(mapping);
    Py_DECREF(item);
    return r;
}

static int
view_values_tp_contains(PyObject *op, PyObject *value)
{
    PyObject *it = view_tp_iter(op);
    if (it == NULL) {
        return -1;
    }
    PyObject *v;
    int r = 0;
    while ((v = PyIter_Next(it)) != NULL) {
        r = PyObject_RichCompareBool(v, value, Py_EQ);
        Py_DECREF(v);
        if (r != 0) {
            break;
        }
    }
    Py_DECREF(it);
    if (r == 0 && PyErr_Occurred()) {
        r = -1;
    }
    return r;
}

/* frozenmap._viewsets.ViewSetOps.<name>(self, other) */
static PyObject *
view_set_op(PyObject *self, PyObject *other, const char *name)
{
    fm_state *st = fm_state_of_type(Py_TYPE(self));
    PyObject *fn = PyObject_GetAttrString(st->view_set_ops, name);
    if (fn == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(fn, self, other, NULL);
    Py_DECREF(fn);
    return r;
}

static int
view_is_setlike(PyObject *op)
{
    fm_state *st = fm_find_state(Py_TYPE(op));
    return st != NULL && (Py_IS_TYPE(op, st->keys_type) || Py_IS_TYPE(op, st->items_type));
}

#define VIEW_BINOP(fname, op_name, rop_name) \
  static PyObject *fname(PyObject *a, PyObject *b) \
  { \
    if (view_is_setlike(a)) { \
      return view_set_op(a, b, op_name); \
    } \
    return view_set_op(b, a, rop_name); \
  }

VIEW_BINOP(view_tp_and, "__and__", "__rand__")
VIEW_BINOP(view_tp_or, "__or__", "__ror__")
VIEW_BINOP(view_tp_subtract, "__sub__", "__rsub__")
VIEW_BINOP(view_tp_xor, "__xor__", "__rxor__")

static PyObject *
view_tp_richcompare(PyObject *self, PyObject *other, int cmp)
{
    static const char *names[] = {"__lt__", "__le__", "__eq__", "__eq__", "__gt__", "__ge__"};
    PyObject *r = view_set_op(self, other, names[cmp]);
    if (r == NULL || cmp != Py_NE || r == Py_NotImplemented) {
        return r;
    }
    int truth = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (truth < 0) {
        return NULL;
    }
    return Py_NewRef(truth ? Py_False : Py_True);
}

static PyObject *
view_py_isdisjoint(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("isdisjoint", self, args, nargs, kwnames);
    }
    PyObject *other = args[0];
    return view_set_op(self, other, "isdisjoint");
}

static PyObject *
view_py_from_iterable(PyObject *cls, PyObject *it)
{
    return PySet_New(it);
}

/* Like dict's views, a view is not pickled or copied (whatever the
 * protocol: copyreg would otherwise try protocols 0 and 1 by other means). */
static PyObject *
view_py_reduce(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__reduce__", op, args, nargs, kwnames);
    }
    PyErr_Format(PyExc_TypeError, "cannot pickle '%s' object", Py_TYPE(op)->tp_name);
    return NULL;
}

static PyMethodDef view_setlike_methods[] = {
    {"__reversed__", (PyCFunction)(void (*)(void))view_py_reversed,
     METH_FASTCALL | METH_KEYWORDS, VIEW_DOC_DUNDER_REVERSED},
    {"__reduce__", (PyCFunction)(void (*)(void))view_py_reduce, METH_FASTCALL | METH_KEYWORDS,
     VIEW_DOC_DUNDER_REDUCE},
    {"isdisjoint", (PyCFunction)(void (*)(void))view_py_isdisjoint,
     METH_FASTCALL | METH_KEYWORDS, VIEW_DOC_ISDISJOINT},
    {"_from_iterable", view_py_from_iterable, METH_O | METH_CLASS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef view_values_methods[] = {
    {"__reversed__", (PyCFunction)(void (*)(void))view_py_reversed,
     METH_FASTCALL | METH_KEYWORDS, VIEW_DOC_DUNDER_REVERSED},
    {"__reduce__", (PyCFunction)(void (*)(void))view_py_reduce, METH_FASTCALL | METH_KEYWORDS,
     VIEW_DOC_DUNDER_REDUCE},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef view_getset[] = {
    {"mapping", view_py_mapping, NULL, "A read-only proxy of the mapping this view looks at.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define VIEW_COMMON_SLOTS \
  {Py_tp_dealloc, view_tp_dealloc}, {Py_tp_traverse, view_tp_traverse}, \
      {Py_tp_repr, view_tp_repr}, {Py_tp_iter, view_tp_iter}, {Py_tp_getset, view_getset}, \
  { \
    Py_sq_length, view_tp_length \
  }

#define VIEW_SETLIKE_SLOTS \
  {Py_tp_methods, view_setlike_methods}, {Py_tp_richcompare, view_tp_richcompare}, \
      {Py_tp_hash, PyObject_HashNotImplemented}, {Py_nb_and, view_tp_and}, \
      {Py_nb_or, view_tp_or}, {Py_nb_subtract, view_tp_subtract}, \
  { \
    Py_nb_xor, view_tp_xor \
  }

static PyType_Slot view_keys_slots[] = {
    VIEW_COMMON_SLOTS,
    VIEW_SETLIKE_SLOTS,
    {Py_sq_contains, view_keys_tp_contains},
    {Py_tp_doc, "A set-like view of a mapping's keys, in insertion order.  Cost: O(1)."},
    {0, NULL},
};

static PyType_Slot view_items_slots[] = {
    VIEW_COMMON_SLOTS,
    VIEW_SETLIKE_SLOTS,
    {Py_sq_contains, view_items_tp_contains},
    {Py_tp_doc, "A set-like view of a mapping's (key, value) pairs.  Cost: O(1)."},
    {0, NULL},
};

static PyType_Slot view_values_slots[] = {
    VIEW_COMMON_SLOTS,
    {Py_tp_methods, view_values_methods},
    {Py_sq_contains, view_values_tp_contains},
    {Py_tp_doc, "A view of a mapping's values, in insertion order.  Cost: O(1)."},
    {0, NULL},
};

#define VIEW_FLAGS \
  (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION)

PyType_Spec view_keys_spec = {
    .name = "frozenmap.frozendict_keys",
    .basicsize = sizeof(view_object),
    .flags = VIEW_FLAGS,
    .slots = view_keys_slots,
};

PyType_Spec view_items_spec = {
    .name = "frozenmap.frozendict_items",
    .basicsize = sizeof(view_object),
    .flags = VIEW_FLAGS,
    .slots = view_items_slots,
};

PyType_Spec view_values_spec = {
    .name = "frozenmap.frozendict_values",
    .basicsize = sizeof(view_object),
    .flags = VIEW_FLAGS,
    .slots = view_values_slots,
};

/* The read methods frozendict and Evolver share (views.py: view_mapping_iter,
 * view_mapping_reversed, view_mapping_keys, view_mapping_values,
 * view_mapping_items). */

PyObject *
view_mapping_tp_iter(PyObject *op)
{
    return view_iter_new(fm_state_of_type(Py_TYPE(op)), op, VIEW_KEYS, 0);
}

PyObject *
view_mapping_py_reversed(PyObject *op, PyObject *unused)
{
    return view_iter_new(fm_state_of_type(Py_TYPE(op)), op, VIEW_KEYS, 1);
}

PyObject *
view_mapping_py_keys(PyObject *op, PyObject *unused)
{
    return view_new(fm_state_of_type(Py_TYPE(op)), op, VIEW_KEYS);
}

PyObject *
view_mapping_py_values(PyObject *op, PyObject *unused)
{
    return view_new(fm_state_of_type(Py_TYPE(op)), op, VIEW_VALUES);
}

PyObject *
view_mapping_py_items(PyObject *op, PyObject *unused)
{
    return view_new(fm_state_of_type(Py_TYPE(op)), op, VIEW_ITEMS);
}
