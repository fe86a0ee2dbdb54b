/* drafts.c -- the hot paths of frozenmap.drafts (produce's drafts) in C.
 *
 * frozenmap/drafts.py is the whole implementation of drafts, for both cores.
 * With the C core loaded, its classes _Scope, DictDraft and ListDraft are
 * built on the three base types here, which hold their fields (what
 * __slots__ would hold, under the same names), and a state drafted from the
 * C core's frozendict (its scope's frozendict is this module's type) runs
 * the most common operations here instead of in Python frames:
 *
 *   - _Scope._root(base, recording): a new scope and its root draft, as
 *     drafts.py's _new_root does;
 *   - draft[key] on a DictDraft (mp_subscript): the owning thread's read,
 *     making the child draft of a nested frozendict or tuple;
 *   - draft[key] = value on a DictDraft (mp_ass_subscript): a draft's first
 *     change with a scalar value (one frozendict.set);
 *   - _Scope._finish(draft, memo, path): drafts.py's _finish for a
 *     DictDraft, patches included (the replace of a leaf map's one change).
 *
 * Everything else, and every case these do not recognise (another thread,
 * a revoked draft, a re-entered change, a value to deep-freeze, a second
 * change, a ListDraft to finish, the operations of the keys a draft
 * touched), calls the Python function of drafts.py that does it, registered
 * by drafts.py with _Scope._register: the C paths are a subset of the Python
 * ones, which stay the reference (a state of the pure core uses them alone,
 * so the tests run both).  Each C path makes the same calls of user code
 * (a key's __hash__ and __eq__, a frozendict's methods) in the same order
 * as the Python it replaces, and follows the rule of the essay in
 * frozendict.c: a reference is held on everything used across a call that
 * can run user code, and new state is installed before old state is
 * released.  A draft's fields are read again after such a call, never
 * trusted from before it.
 *
 * Free-threaded builds take the Python paths only: their fields are not
 * guarded here.
 */
#include "cfrozenmap.h"
#include <structmember.h>

/* --- the types ------------------------------------------------------------ */

/* A produce() call (drafts.py's _Scope): reader and writer are the ids of
 * the threads allowed to read and to change its drafts (None when no one
 * may), frozendict the type new maps are made of. */
typedef struct {
    PyObject_HEAD
    PyObject *reader;
    PyObject *writer;
    PyObject *frozendict;
    Py_ssize_t edits;
    char recording;
    char shared;
} draft_scope;

/* The two draft layouts start alike: scope and base at the same offsets. */
typedef struct {
    PyObject_HEAD
    PyObject *scope;
    PyObject *base;
} draft_head;

typedef struct {
    PyObject_HEAD
    PyObject *scope;
    PyObject *base;
    PyObject *map;      /* _map: the base, a derived frozendict, or an Evolver */
    PyObject *children; /* _children: None or {key: draft} */
    PyObject *touched;  /* _touched */
    PyObject *first;    /* _first: (key, value stored or _MISSING), or unset */
} draft_dict;

typedef struct {
    PyObject_HEAD
    PyObject *scope;
    PyObject *base;
    PyObject *items;    /* _items */
    PyObject *children; /* _children */
    PyObject *log;      /* _log */
} draft_list;

/* What drafts.py registers (_Scope._register), in this order, followed by
 * the interned names this file uses. */
enum {
    DR_SCOPE_CLASS, /* _Scope */
    DR_DICT_CLASS,  /* DictDraft */
    DR_LIST_CLASS,  /* ListDraft */
    DR_DRAFTABLE,   /* _DRAFTABLE: type -> maker (the frozendict types and tuple) */
    DR_FINISH,      /* _finish(draft, memo, path) */
    DR_GETITEM,     /* DictDraft._getitem(draft, key) */
    DR_SETITEM,     /* DictDraft._setitem(draft, key, value) */
    DR_DELITEM,     /* DictDraft._delitem(draft, key) */
    DR_EMIT_KEYS,   /* _emit_keys(draft, value, path, memo, touched) */
    DR_EMIT,        /* _emit(draft, path, memo) */
    DR_TOKEN,       /* _token(key) */
    DR_CYCLE,       /* _cycle(): the ValueError of a draft inside itself */
    DR_MISSING,     /* _MISSING */
    DR_IN_PROGRESS, /* _IN_PROGRESS */
    DR_WHOLE,       /* _WHOLE */
    DR_MEMO_CLASS,  /* _Memo */
    DR_REGISTERED,  /* (the count of the above) */
    DR_STR_OP = DR_REGISTERED,
    DR_STR_PATH,
    DR_STR_VALUE,
    DR_STR_REPLACE,
    DR_STR_FORWARD,
    DR_STR_UNDO,
    DR_STR_FREEZE,
    DR_STR_EVOLVE,
    DR_STR_SET,
    DR_STR_SETDEFAULT,
    DR_STR_FIRST,
    DR_STR_GET,
    DR_STR_ADD,
    DR_STR_REMOVE,
    DR_REPLACE_TEMPLATE, /* {"op": "replace", "path": None, "value": None} */
    DR_ADD_TEMPLATE,     /* {"op": "add", "path": None, "value": None} */
    DR_REMOVE_TEMPLATE,  /* {"op": "remove", "path": None} */
    DR_COUNT
};

static const char *const draft_names[DR_REPLACE_TEMPLATE - DR_REGISTERED] = {
    "op",     "path", "value",      "replace", "forward", "undo", "freeze",
    "evolve", "set",  "setdefault", "_first",  "get",     "add",  "remove",
};

#define REG(reg, i) PyTuple_GET_ITEM((reg), (i))

/* --- who may use a draft -------------------------------------------------- */

/* Whether ident (a scope's reader or writer) is the calling thread's id. */
static int
draft_is_current(PyObject *ident)
{
    if (ident == NULL || !PyLong_CheckExact(ident)) {
        return 0;
    }
    unsigned long value = PyLong_AsUnsignedLong(ident);
    if (value == (unsigned long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return value == PyThread_get_thread_ident();
}

/* The scope of a draft when a C path may serve the call: drafts.py has
 * registered, the draft is of a C-core state, and the calling thread is its
 * reader (its writer when writing).  NULL (no error set): the call goes to
 * drafts.py, which checks everything again and says what is wrong. */
static draft_scope *
draft_fast_scope(fm_state *st, PyObject *scope, int writing)
{
#if FM_FREE_THREADED
    return NULL;
#else
    if (st->drafts == NULL || scope == NULL
        || !PyObject_TypeCheck(scope, st->draft_scope_type)) {
        return NULL;
    }
    draft_scope *s = (draft_scope *)scope;
    if (s->frozendict != (PyObject *)st->frozendict_type
        || !draft_is_current(writing ? s->writer : s->reader)) {
        return NULL;
    }
    return s;
#endif
}

/* Call the registered Python function which (1 to 5 arguments, NULL
 * after the last).  New ref or NULL. */
static PyObject *
draft_call(fm_state *st, int which, PyObject *a, PyObject *b, PyObject *c, PyObject *d,
           PyObject *e)
{
    if (st->drafts == NULL) {
        PyErr_SetString(PyExc_TypeError, "drafts are made by frozenmap.produce()");
        return NULL;
    }
    PyObject *args[5] = {a, b, c, d, e};
    size_t n = 0;
    while (n < 5 && args[n] != NULL) {
        n++;
    }
    PyObject *reg = Py_NewRef(st->drafts);
    PyObject *func = Py_NewRef(REG(reg, which));
    PyObject *result = PyObject_Vectorcall(func, args, n, NULL);
    Py_DECREF(func);
    Py_DECREF(reg);
    return result;
}

/* --- making drafts -------------------------------------------------------- */

/* drafts.py's _SCALARS: values stored as they are, with no freeze(). */
static inline int
draft_is_scalar(PyObject *value)
{
    PyTypeObject *tp = Py_TYPE(value);
    return tp == &PyUnicode_Type || tp == &PyLong_Type || tp == &PyFloat_Type
           || tp == &PyBool_Type || value == Py_None || tp == &PyBytes_Type
           || tp == &PyComplex_Type;
}

/* Whether cls is one of frozenmap's frozendict types (drafts.py's
 * _FROZENDICT_TYPES: the keys of _DRAFTABLE but tuple).  1, 0 or -1. */
static int
draft_is_frozendict_type(fm_state *st, PyObject *reg, PyTypeObject *cls)
{
    if (cls == st->frozendict_type) {
        return 1;
    }
    if (cls == &PyTuple_Type || cls == &PyUnicode_Type || cls == &PyLong_Type
        || cls == &PyFloat_Type || cls == &PyBool_Type || cls == Py_TYPE(Py_None)) {
        return 0;
    }
    PyObject *draftable = Py_NewRef(REG(reg, DR_DRAFTABLE));
    PyObject *hit = PyDict_GetItemWithError(draftable, (PyObject *)cls);
    Py_DECREF(draftable);
    if (hit != NULL) {
        return 1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* A new draft of the frozendict base (drafts.py's _new_dict_draft). */
static PyObject *
draft_dict_new(PyObject *reg, PyObject *scope, PyObject *base)
{
    PyTypeObject *cls = (PyTypeObject *)REG(reg, DR_DICT_CLASS);
    draft_dict *d = (draft_dict *)cls->tp_alloc(cls, 0);
    if (d == NULL) {
        return NULL;
    }
    d->scope = Py_NewRef(scope);
    d->base = Py_NewRef(base);
    d->map = Py_NewRef(base);
    d->children = Py_NewRef(Py_None);
    d->touched = Py_NewRef(Py_None);
    return (PyObject *)d;
}

/* A new draft of the tuple base (drafts.py's _new_list_draft). */
static PyObject *
draft_list_new(PyObject *reg, PyObject *scope, PyObject *base)
{
    PyTypeObject *cls = (PyTypeObject *)REG(reg, DR_LIST_CLASS);
    draft_list *d = (draft_list *)cls->tp_alloc(cls, 0);
    if (d == NULL) {
        return NULL;
    }
    d->scope = Py_NewRef(scope);
    d->base = Py_NewRef(base);
    d->items = Py_NewRef(Py_None);
    d->children = Py_NewRef(Py_None);
    d->log = Py_NewRef(Py_None);
    return (PyObject *)d;
}

/* --- reads ---------------------------------------------------------------- */

/* draft[key] (drafts.py's DictDraft._getitem) for the scope's own thread. */
static PyObject *
draft_dict_read(fm_state *st, PyObject *reg, draft_dict *self, PyObject *scope, PyObject *key)
{
    PyObject *children = self->children;
    if (children != Py_None) {
        Py_INCREF(children);
        PyObject *child = PyDict_GetItemWithError(children, key);
        Py_XINCREF(child);
        Py_DECREF(children);
        if (child != NULL) {
            return child;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    PyObject *map = Py_NewRef(self->map);
    PyObject *value = PyObject_GetItem(map, key);
    Py_DECREF(map);
    if (value == NULL) {
        return NULL;
    }
    PyObject *child;
    PyTypeObject *cls = Py_TYPE(value);
    if (cls == &PyTuple_Type) {
        child = draft_list_new(reg, scope, value);
    }
    else {
        int frozendict = draft_is_frozendict_type(st, reg, cls);
        if (frozendict <= 0) {
            if (frozendict < 0) {
                Py_CLEAR(value);
            }
            return value;
        }
        child = draft_dict_new(reg, scope, value);
    }
    Py_DECREF(value);
    if (child == NULL) {
        return NULL;
    }
    /* Again: a key's __eq__ may have read the draft and made a child. */
    children = self->children;
    if (children == Py_None || children == NULL) {
        PyObject *fresh = PyDict_New();
        if (fresh == NULL || PyDict_SetItem(fresh, key, child) < 0) {
            Py_XDECREF(fresh);
            Py_DECREF(child);
            return NULL;
        }
        PyObject *old = self->children;
        self->children = fresh;
        Py_XDECREF(old);
        return child;
    }
    Py_INCREF(children);
    PyObject *kept;
    if (PyDict_CheckExact(children)) {
        kept = Py_XNewRef(PyDict_SetDefault(children, key, child));
    }
    else {
        kept = PyObject_CallMethodObjArgs(children, REG(reg, DR_STR_SETDEFAULT), key, child,
                                          NULL);
    }
    Py_DECREF(children);
    Py_DECREF(child);
    return kept;
}

static PyObject *
draft_dict_tp_subscript(PyObject *op, PyObject *key)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    draft_dict *self = (draft_dict *)op;
    if (draft_fast_scope(st, self->scope, 0) == NULL || self->map == NULL
        || self->children == NULL
        || (self->children != Py_None && !PyDict_Check(self->children))) {
        return draft_call(st, DR_GETITEM, op, key, NULL, NULL, NULL);
    }
    PyObject *reg = Py_NewRef(st->drafts);
    PyObject *scope = Py_NewRef(self->scope);
    PyObject *result = draft_dict_read(st, reg, self, scope, key);
    Py_DECREF(scope);
    Py_DECREF(reg);
    return result;
}

/* --- changes -------------------------------------------------------------- */

/* draft[key] = value (drafts.py's DictDraft._setitem) for a draft's first
 * change with a scalar value: one frozendict.set, remembered in _first. */
static int
draft_dict_first_set(fm_state *st, draft_dict *self, draft_scope *scope, PyObject *key,
                     PyObject *value)
{
    Py_INCREF(scope);
    scope->edits++;
    PyObject *ident = scope->writer; /* its reference moves here until the end */
    scope->writer = Py_NewRef(Py_None);
    PyObject *children = Py_NewRef(self->children);
    PyObject *contents = Py_NewRef(self->map); /* the base: released at the end */
    PyObject *old_map = NULL, *old_first = NULL;
    int result = -1;
    PyObject *changed = derive_with(st, contents, key, value);
    if (changed != NULL) {
        PyObject *first = PyTuple_Pack(2, key, value);
        if (first == NULL) {
            Py_DECREF(changed);
        }
        else {
            old_map = self->map;
            self->map = changed;
            old_first = self->first;
            self->first = first;
            result = 0;
            if (PyDict_Check(children) && PyDict_GET_SIZE(children) > 0
                && PyDict_DelItem(children, key) < 0) {
                if (PyErr_ExceptionMatches(PyExc_KeyError)) {
                    PyErr_Clear();
                }
                else {
                    result = -1;
                }
            }
        }
    }
    PyObject *busy = scope->writer;
    scope->writer = ident;
    Py_XDECREF(busy);
    /* What the change released goes last: its finalizers see the draft
     * changed and usable. */
    Py_XDECREF(old_first);
    Py_XDECREF(old_map);
    Py_DECREF(contents);
    Py_DECREF(children);
    Py_DECREF(scope);
    return result;
}

static int
draft_dict_tp_ass_subscript(PyObject *op, PyObject *key, PyObject *value)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    draft_dict *self = (draft_dict *)op;
    PyObject *done;
    if (value == NULL) {
        done = draft_call(st, DR_DELITEM, op, key, NULL, NULL, NULL);
    }
    else {
        draft_scope *scope = draft_fast_scope(st, self->scope, 1);
        if (scope != NULL && draft_is_scalar(value) && self->map != NULL
            && self->map == self->base && Py_IS_TYPE(self->map, st->frozendict_type)
            && self->children != NULL
            && (self->children == Py_None || PyDict_Check(self->children))) {
            return draft_dict_first_set(st, self, scope, key, value);
        }
        done = draft_call(st, DR_SETITEM, op, key, value, NULL, NULL);
    }
    if (done == NULL) {
        return -1;
    }
    Py_DECREF(done);
    return 0;
}

/* --- finishing ------------------------------------------------------------ */

/* One finish (drafts.py's _finish from produce, produce_with_patches or
 * current()): what each of its nodes uses. */
typedef struct {
    fm_state *st;
    PyObject *reg;
    /* A dict (a _Memo for patches), None (produce), or NULL: a _Memo made
     * when first needed (_patches, whose lists are forward and undo). */
    PyObject *memo;
    /* Whether the nodes are memoized by identity.  drafts.py's _finish does
     * it whenever memo is not None; here only when the scope is shared (a
     * draft was stored somewhere): drafts that each stand in one place are
     * finished once, so their entries would never be read. */
    int memoize;
    PyObject *forward; /* memo.forward and memo.undo, fetched when first needed */
    PyObject *undo;
} draft_finishing;

/* The finish's memo (borrowed), made now if it was left to be made when
 * first needed: a _Memo holding the finish's forward and undo lists. */
static PyObject *
draft_memo(draft_finishing *f)
{
    if (f->memo != NULL) {
        return f->memo;
    }
    PyObject *memo = PyObject_CallNoArgs(REG(f->reg, DR_MEMO_CLASS));
    if (memo == NULL) {
        return NULL;
    }
    if (!PyDict_Check(memo)
        || PyObject_SetAttr(memo, REG(f->reg, DR_STR_FORWARD), f->forward) < 0
        || PyObject_SetAttr(memo, REG(f->reg, DR_STR_UNDO), f->undo) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a _Memo is a dict");
        }
        Py_DECREF(memo);
        return NULL;
    }
    f->memo = memo; /* released by _patches */
    return memo;
}

/* Whether text (a str) may be read as ASCII bytes. */
static inline int
draft_ascii(PyObject *text)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(text)) {
        return 0;
    }
#endif
    return PyUnicode_IS_ASCII(text);
}

/* a + "/" + b, or a + "/" + b + "/" + c (str, c may be NULL): a path.  New
 * ref or NULL. */
static PyObject *
draft_join(PyObject *a, PyObject *b, PyObject *c)
{
    if (!draft_ascii(a) || !draft_ascii(b) || (c != NULL && !draft_ascii(c))) {
        return c == NULL ? PyUnicode_FromFormat("%U/%U", a, b)
                         : PyUnicode_FromFormat("%U/%U/%U", a, b, c);
    }
    Py_ssize_t na = PyUnicode_GET_LENGTH(a), nb = PyUnicode_GET_LENGTH(b);
    Py_ssize_t nc = c == NULL ? 0 : PyUnicode_GET_LENGTH(c);
    PyObject *joined = PyUnicode_New(na + 1 + nb + (c == NULL ? 0 : 1 + nc), 127);
    if (joined == NULL) {
        return NULL;
    }
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(joined);
    memcpy(out, PyUnicode_1BYTE_DATA(a), (size_t)na);
    out += na;
    *out++ = '/';
    memcpy(out, PyUnicode_1BYTE_DATA(b), (size_t)nb);
    if (c != NULL) {
        out += nb;
        *out++ = '/';
        memcpy(out, PyUnicode_1BYTE_DATA(c), (size_t)nc);
    }
    return joined;
}

/* A draft's map as a frozendict: the map itself, or map.freeze() for an
 * Evolver.  New ref or NULL. */
static PyObject *
draft_frozen(fm_state *st, PyObject *reg, PyObject *map)
{
    int frozen = draft_is_frozendict_type(st, reg, Py_TYPE(map));
    if (frozen < 0) {
        return NULL;
    }
    if (frozen) {
        return Py_NewRef(map);
    }
    return PyObject_CallMethodNoArgs(map, REG(reg, DR_STR_FREEZE));
}

/* drafts.py's _written(touched, key): 1, 0 or -1. */
static int
draft_written(PyObject *reg, PyObject *touched, PyObject *key)
{
    if (touched == REG(reg, DR_WHOLE)) {
        return 1;
    }
    if (PyTuple_CheckExact(touched) && PyTuple_GET_SIZE(touched) > 0) {
        PyObject *written = Py_NewRef(PyTuple_GET_ITEM(touched, 0));
        int r = PyObject_RichCompareBool(written, key, Py_EQ);
        Py_DECREF(written);
        return r;
    }
    return PySequence_Contains(touched, key);
}

/* key as drafts.py writes it in a path: itself for a str without '~' or
 * '/', else _token(key).  New ref or NULL. */
static PyObject *
draft_step(fm_state *st, PyObject *key)
{
    if (PyUnicode_CheckExact(key)) {
        Py_ssize_t n = PyUnicode_GetLength(key);
        Py_ssize_t tilde = n < 0 ? -2 : PyUnicode_FindChar(key, '~', 0, n, 1);
        Py_ssize_t slash = tilde == -1 ? PyUnicode_FindChar(key, '/', 0, n, 1) : tilde;
        if (tilde == -2 || slash == -2) {
            return NULL;
        }
        if (tilde == -1 && slash == -1) {
            return Py_NewRef(key);
        }
    }
    return draft_call(st, DR_TOKEN, key, NULL, NULL, NULL, NULL);
}

/* drafts.py's _pointer(path, key).  New ref or NULL. */
static PyObject *
draft_pointer(fm_state *st, PyObject *path, PyObject *key)
{
    PyObject *step = draft_step(st, key);
    if (step == NULL) {
        return NULL;
    }
    PyObject *where = draft_join(path, step, NULL);
    Py_DECREF(step);
    return where;
}

/* {"op": <kind>, "path": where, "value": value} appended to ops (value
 * NULL for a remove), made as a copy of the registered template of kind:
 * DR_REPLACE_TEMPLATE, DR_ADD_TEMPLATE or DR_REMOVE_TEMPLATE. */
static int
draft_append_op(PyObject *reg, PyObject *ops, int kind, PyObject *where, PyObject *value)
{
    PyObject *op = PyDict_Copy(REG(reg, kind));
    int r = -1;
    if (op != NULL && PyDict_SetItem(op, REG(reg, DR_STR_PATH), where) == 0
        && (value == NULL || PyDict_SetItem(op, REG(reg, DR_STR_VALUE), value) == 0)) {
        if (PyList_CheckExact(ops)) {
            r = PyList_Append(ops, op);
        }
        else {
            PyObject *done = PyObject_CallMethod(ops, "append", "O", op);
            r = done == NULL ? -1 : 0;
            Py_XDECREF(done);
        }
    }
    Py_XDECREF(op);
    return r;
}

/* The finish's forward and undo lists (memo.forward and memo.undo): 0, or
 * -1 if they cannot be had. */
static int
draft_ops(draft_finishing *f)
{
    if (f->forward == NULL) {
        f->forward = PyObject_GetAttr(f->memo, REG(f->reg, DR_STR_FORWARD));
        if (f->forward == NULL) {
            return -1;
        }
        f->undo = PyObject_GetAttr(f->memo, REG(f->reg, DR_STR_UNDO));
        if (f->undo == NULL) {
            Py_CLEAR(f->forward);
            return -1;
        }
    }
    return 0;
}

/* The replace of one value and its undoing: memo.forward gets fresh,
 * memo.undo old, at where. */
static int
draft_emit_replace(draft_finishing *f, PyObject *where, PyObject *fresh, PyObject *old)
{
    if (draft_ops(f) < 0
        || draft_append_op(f->reg, f->forward, DR_REPLACE_TEMPLATE, where, fresh) < 0) {
        return -1;
    }
    return draft_append_op(f->reg, f->undo, DR_REPLACE_TEMPLATE, where, old);
}

/* mapping.get(key, _MISSING), as a new ref (_MISSING too) or NULL. */
static PyObject *
draft_get(draft_finishing *f, PyObject *mapping, PyObject *key)
{
    PyObject *missing = REG(f->reg, DR_MISSING);
    if (Py_IS_TYPE(mapping, f->st->frozendict_type)) {
        PyObject *value;
        fm_lookup found = mapping_get(f->st, mapping, key, &value);
        if (found == FM_ERROR) {
            return NULL;
        }
        return found == FM_FOUND ? value : Py_NewRef(missing);
    }
    return PyObject_CallMethodObjArgs(mapping, REG(f->reg, DR_STR_GET), key, missing, NULL);
}

/* The operations of one key a draft wrote (drafts.py's _emit_keys, in its
 * loop): a key set where it stands (mark _KEPT) is a replace; a key removed
 * (and maybe added again, at the end) a remove and an add.  0 or -1. */
static int
draft_emit_key(draft_finishing *f, PyObject *value, PyObject *base, PyObject *path,
               PyObject *key, PyObject *mark)
{
    PyObject *where = draft_pointer(f->st, path, key);
    if (where == NULL) {
        return -1;
    }
    PyObject *fresh = NULL, *old = NULL;
    int r = -1;
    long kind = PyLong_CheckExact(mark) ? PyLong_AsLong(mark) : -1;
    if (kind == 0) { /* _KEPT */
        fresh = PyObject_GetItem(value, key);
        old = fresh == NULL ? NULL : PyObject_GetItem(base, key);
        if (old != NULL) {
            r = fresh == old ? 0 : draft_emit_replace(f, where, fresh, old);
        }
        goto done;
    }
    if (kind != 1) { /* (never written so: _MOVED is the other mark) */
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a draft's key marks are _KEPT or _MOVED");
        }
        goto done;
    }
    PyObject *missing = REG(f->reg, DR_MISSING);
    old = draft_get(f, base, key);
    if (old == NULL) {
        goto done;
    }
    if (old != missing
        && (draft_append_op(f->reg, f->forward, DR_REMOVE_TEMPLATE, where, NULL) < 0
            || draft_append_op(f->reg, f->undo, DR_ADD_TEMPLATE, where, old) < 0)) {
        goto done;
    }
    fresh = draft_get(f, value, key);
    if (fresh == NULL) {
        goto done;
    }
    if (fresh != missing
        && (draft_append_op(f->reg, f->forward, DR_ADD_TEMPLATE, where, fresh) < 0
            || draft_append_op(f->reg, f->undo, DR_REMOVE_TEMPLATE, where, NULL) < 0)) {
        goto done;
    }
    r = 0;
done:
    Py_XDECREF(fresh);
    Py_XDECREF(old);
    Py_DECREF(where);
    return r;
}

/* drafts.py's _emit_keys(draft, value, path, memo, touched): the
 * operations of the keys the draft d wrote, in the order of the writes.
 * New ref to value, or NULL. */
static PyObject *
draft_emit_keys(draft_finishing *f, draft_dict *d, PyObject *value, PyObject *path,
                PyObject *touched)
{
    PyObject *whole = REG(f->reg, DR_WHOLE);
    if (touched != whole && !PyDict_CheckExact(touched)
        && !(PyTuple_CheckExact(touched) && PyTuple_GET_SIZE(touched) == 2)) {
        PyObject *memo = draft_memo(f);
        return memo == NULL ? NULL
                            : draft_call(f->st, DR_EMIT_KEYS, (PyObject *)d, value, path, memo,
                                         touched);
    }
    PyObject *base = Py_NewRef(d->base);
    PyObject *items = NULL, *result = NULL;
    if (value == base) {
        result = Py_NewRef(value);
        goto done;
    }
    if (draft_ops(f) < 0) {
        goto done;
    }
    if (touched == whole) {
        if (draft_emit_replace(f, path, value, base) == 0) {
            result = Py_NewRef(value);
        }
        goto done;
    }
    if (PyTuple_CheckExact(touched)) {
        if (draft_emit_key(f, value, base, path, PyTuple_GET_ITEM(touched, 0),
                           PyTuple_GET_ITEM(touched, 1))
            == 0) {
            result = Py_NewRef(value);
        }
        goto done;
    }
    items = PyDict_Items(touched);
    if (items == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        if (draft_emit_key(f, value, base, path, PyTuple_GET_ITEM(pair, 0),
                           PyTuple_GET_ITEM(pair, 1))
            < 0) {
            goto done;
        }
    }
    result = Py_NewRef(value);
done:
    Py_XDECREF(items);
    Py_DECREF(base);
    return result;
}

/* value.set(key, final): a new ref or NULL. */
static PyObject *
draft_set(fm_state *st, PyObject *reg, PyObject *value, PyObject *key, PyObject *final)
{
    if (Py_IS_TYPE(value, st->frozendict_type)) {
        return derive_with(st, value, key, final);
    }
    return PyObject_CallMethodObjArgs(value, REG(reg, DR_STR_SET), key, final, NULL);
}

/* A draft's _base (new ref or NULL). */
static PyObject *
draft_base_of(PyObject *reg, PyObject *draft)
{
    if (Py_IS_TYPE(draft, (PyTypeObject *)REG(reg, DR_DICT_CLASS))
        || Py_IS_TYPE(draft, (PyTypeObject *)REG(reg, DR_LIST_CLASS))) {
        PyObject *base = ((draft_head *)draft)->base;
        if (base != NULL) {
            return Py_NewRef(base);
        }
    }
    return PyObject_GetAttrString(draft, "_base");
}

/* A DictDraft's _first, a (key, value) pair: new ref, or NULL with
 * AttributeError when unset (as drafts.py reading it would raise). */
static PyObject *
draft_first_of(PyObject *reg, draft_dict *d)
{
    PyObject *first = d->first;
    if (first == NULL) {
        return PyObject_GetAttr((PyObject *)d, REG(reg, DR_STR_FIRST));
    }
    if (!PyTuple_CheckExact(first) || PyTuple_GET_SIZE(first) != 2) {
        PyErr_SetString(PyExc_TypeError, "a draft's _first is a (key, value) pair");
        return NULL;
    }
    return Py_NewRef(first);
}

/* drafts.py's _first_change(draft): (key, _KEPT) or (key, _MOVED). */
static PyObject *
draft_first_change(PyObject *reg, draft_dict *d)
{
    PyObject *first = draft_first_of(reg, d);
    if (first == NULL) {
        return NULL;
    }
    PyObject *result = NULL;
    int kept = 0;
    if (PyTuple_GET_ITEM(first, 1) != REG(reg, DR_MISSING)) {
        PyObject *map = Py_NewRef(d->map);
        PyObject *base = Py_NewRef(d->base);
        Py_ssize_t now = PyObject_Size(map);
        Py_ssize_t before = now < 0 ? -1 : PyObject_Size(base);
        Py_DECREF(map);
        Py_DECREF(base);
        if (before < 0) {
            goto done;
        }
        kept = now == before;
    }
    result = Py_BuildValue("(Oi)", PyTuple_GET_ITEM(first, 0), kept ? 0 : 1);
done:
    Py_DECREF(first);
    return result;
}

static PyObject *draft_finish(draft_finishing *f, PyObject *op, PyObject *path);

/* The path of the child at key, or None: drafts.py's "where" (None when
 * there is no path, or the parent wrote key itself).  New ref or NULL. */
static PyObject *
draft_child_path(draft_finishing *f, PyObject *path, PyObject *touched, PyObject *key)
{
    if (path == Py_None) {
        return Py_NewRef(Py_None);
    }
    int written = touched == Py_None ? 0 : draft_written(f->reg, touched, key);
    if (written < 0) {
        return NULL;
    }
    return written ? Py_NewRef(Py_None) : draft_pointer(f->st, path, key);
}

/* The final value (new ref, or NULL) of the child (key, child) of a node
 * finished at path (None: no patches) whose own writes are touched.  A
 * leaf map (a DictDraft without children) is finished here, its one change
 * written as one replace, as drafts.py's _finish does without the call. */
static PyObject *
draft_finish_child(draft_finishing *f, PyObject *key, PyObject *child, PyObject *path,
                   PyObject *touched)
{
    draft_dict *c = (draft_dict *)child;
    int leaf = Py_IS_TYPE(child, (PyTypeObject *)REG(f->reg, DR_DICT_CLASS)) && c->map != NULL
               && c->base != NULL && c->touched != NULL
               && (c->children == Py_None
                   || (c->children != NULL && PyDict_CheckExact(c->children)
                       && PyDict_GET_SIZE(c->children) == 0));
    if (!leaf) {
        PyObject *where = draft_child_path(f, path, touched, key);
        if (where == NULL) {
            return NULL;
        }
        PyObject *final = draft_finish(f, child, where);
        Py_DECREF(where);
        return final;
    }
    PyObject *map = Py_NewRef(c->map);
    PyObject *final = draft_frozen(f->st, f->reg, map);
    Py_DECREF(map);
    if (final == NULL || path == Py_None) {
        return final;
    }
    PyObject *base = Py_NewRef(c->base);
    PyObject *first = NULL, *fresh = NULL, *old = NULL, *step = NULL, *name = NULL;
    PyObject *where = NULL;
    int ok = 0;
    if (final == base) {
        ok = 1;
        goto done;
    }
    if (c->touched == Py_None) { /* one change: _first */
        first = draft_first_of(f->reg, c);
        if (first == NULL) {
            goto done;
        }
        PyObject *written = PyTuple_GET_ITEM(first, 0);
        int in_place = PyTuple_GET_ITEM(first, 1) != REG(f->reg, DR_MISSING);
        if (in_place) {
            Py_ssize_t now = PyObject_Size(final);
            Py_ssize_t before = now < 0 ? -1 : PyObject_Size(base);
            if (before < 0) {
                goto done;
            }
            in_place = now == before;
        }
        if (in_place && touched != Py_None) {
            int r = draft_written(f->reg, touched, key);
            if (r < 0) {
                goto done;
            }
            in_place = !r;
        }
        if (in_place) { /* one key set in place, the map in place: a replace */
            /* final[written] is the value stored; looked up as drafts.py
             * does unless the key is a str, whose lookup runs no user code. */
            fresh = PyUnicode_CheckExact(written) ? Py_NewRef(PyTuple_GET_ITEM(first, 1))
                                                  : PyObject_GetItem(final, written);
            old = fresh == NULL ? NULL : PyObject_GetItem(base, written);
            if (old == NULL) {
                goto done;
            }
            if (fresh != old) {
                step = draft_step(f->st, key);
                name = step == NULL ? NULL : draft_step(f->st, written);
                where = name == NULL ? NULL : draft_join(path, step, name);
                if (where == NULL || draft_emit_replace(f, where, fresh, old) < 0) {
                    goto done;
                }
            }
            ok = 1;
            goto done;
        }
    }
    where = draft_child_path(f, path, touched, key);
    if (where == NULL) {
        goto done;
    }
    if (where != Py_None) { /* (the same value again, and its operations) */
        PyObject *again = draft_finish(f, child, where);
        if (again == NULL) {
            goto done;
        }
        Py_DECREF(again);
    }
    ok = 1;
done:
    Py_DECREF(base);
    Py_XDECREF(first);
    Py_XDECREF(fresh);
    Py_XDECREF(old);
    Py_XDECREF(step);
    Py_XDECREF(name);
    Py_XDECREF(where);
    if (!ok) {
        Py_CLEAR(final);
    }
    return final;
}

/* The final value of the child (key, child), added to the changes of its
 * parent when it differs from the child's base: *one_key and *one_final
 * hold the first change, *more (a list of pairs, made when needed) the
 * others.  0 or -1. */
static int
draft_finish_into(draft_finishing *f, PyObject *key, PyObject *child, PyObject *path,
                  PyObject *touched, PyObject **one_key, PyObject **one_final, PyObject **more)
{
    PyObject *final = draft_finish_child(f, key, child, path, touched);
    if (final == NULL) {
        return -1;
    }
    PyObject *base = draft_base_of(f->reg, child);
    int r = base == NULL ? -1 : 0;
    if (base != NULL && final != base) {
        if (*one_key == NULL) {
            *one_key = Py_NewRef(key);
            *one_final = Py_NewRef(final);
        }
        else {
            if (*more == NULL) {
                *more = PyList_New(0);
            }
            PyObject *change = *more == NULL ? NULL : PyTuple_Pack(2, key, final);
            r = change == NULL ? -1 : PyList_Append(*more, change);
            Py_XDECREF(change);
        }
    }
    Py_XDECREF(base);
    Py_DECREF(final);
    return r;
}

/* The children's changes made in value (a frozendict): one set, or an
 * Evolver for several.  Steals value; new ref or NULL. */
static PyObject *
draft_apply(draft_finishing *f, PyObject *value, PyObject *one_key, PyObject *one_final,
            PyObject *more)
{
    if (one_key == NULL) {
        return value;
    }
    if (more == NULL) {
        PyObject *changed = draft_set(f->st, f->reg, value, one_key, one_final);
        Py_DECREF(value);
        return changed;
    }
    PyObject *evolver = PyObject_CallMethodNoArgs(value, REG(f->reg, DR_STR_EVOLVE));
    Py_DECREF(value);
    if (evolver == NULL) {
        return NULL;
    }
    if (PyObject_SetItem(evolver, one_key, one_final) < 0) {
        Py_DECREF(evolver);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(more); i++) {
        PyObject *change = PyList_GET_ITEM(more, i);
        if (PyObject_SetItem(evolver, PyTuple_GET_ITEM(change, 0), PyTuple_GET_ITEM(change, 1))
            < 0) {
            Py_DECREF(evolver);
            return NULL;
        }
    }
    PyObject *frozen = PyObject_CallMethodNoArgs(evolver, REG(f->reg, DR_STR_FREEZE));
    Py_DECREF(evolver);
    return frozen;
}

/* drafts.py's _finish(draft, memo, path) for a DictDraft; anything else
 * goes to it. */
static PyObject *
draft_finish(draft_finishing *f, PyObject *op, PyObject *path)
{
    draft_dict *d = (draft_dict *)op;
    if (!Py_IS_TYPE(op, (PyTypeObject *)REG(f->reg, DR_DICT_CLASS)) || d->map == NULL
        || d->base == NULL || d->children == NULL || d->touched == NULL
        || (d->children != Py_None && !PyDict_Check(d->children))
        || (path != Py_None && !PyUnicode_Check(path))) {
        PyObject *memo = draft_memo(f);
        return memo == NULL ? NULL : draft_call(f->st, DR_FINISH, op, memo, path, NULL, NULL);
    }
    if (Py_EnterRecursiveCall(" while finishing a draft")) {
        return NULL;
    }
    PyObject *result = NULL, *ident = NULL, *items = NULL;
    PyObject *one_key = NULL, *one_final = NULL, *more = NULL;
    PyObject *map = Py_NewRef(d->map);
    PyObject *value = draft_frozen(f->st, f->reg, map);
    PyObject *children = Py_NewRef(d->children);
    PyObject *touched = Py_NewRef(d->touched);
    Py_DECREF(map);
    if (value == NULL) {
        goto done;
    }
    if (touched == Py_None && path != Py_None) {
        map = Py_NewRef(d->map);
        int frozendict = draft_is_frozendict_type(f->st, f->reg, Py_TYPE(map));
        int changed = map != d->base;
        Py_DECREF(map);
        if (frozendict < 0) {
            goto done;
        }
        if (frozendict && changed) { /* exactly one change: _first */
            Py_SETREF(touched, draft_first_change(f->reg, d));
            if (touched == NULL) {
                goto done;
            }
        }
    }
    if (children != Py_None && PyDict_GET_SIZE(children) > 0) {
        if (f->memoize) {
            ident = PyLong_FromVoidPtr(op);
            if (ident == NULL) {
                goto done;
            }
            PyObject *seen = PyDict_GetItemWithError(f->memo, ident); /* (made) */
            if (seen != NULL) {
                Py_INCREF(seen);
                if (seen == REG(f->reg, DR_IN_PROGRESS)) {
                    Py_DECREF(seen);
                    PyObject *error =
                        draft_call(f->st, DR_CYCLE, NULL, NULL, NULL, NULL, NULL);
                    if (error != NULL) {
                        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
                        Py_DECREF(error);
                    }
                    goto done;
                }
                if (path != Py_None) { /* finished before, where it was not in place */
                    PyObject *emitted =
                        draft_call(f->st, DR_EMIT, op, path, f->memo, NULL, NULL);
                    if (emitted == NULL) {
                        Py_DECREF(seen);
                        goto done;
                    }
                    Py_DECREF(emitted);
                }
                result = seen;
                goto done;
            }
            if (PyErr_Occurred()
                || PyDict_SetItem(f->memo, ident, REG(f->reg, DR_IN_PROGRESS)) < 0) {
                goto done;
            }
        }
        /* The children as they are now: a key's __eq__ run below may read
         * the draft and add one. */
        if (PyDict_GET_SIZE(children) == 1) {
            Py_ssize_t pos = 0;
            PyObject *key, *child;
            PyDict_Next(children, &pos, &key, &child);
            Py_INCREF(key);
            Py_INCREF(child);
            int r =
                draft_finish_into(f, key, child, path, touched, &one_key, &one_final, &more);
            Py_DECREF(key);
            Py_DECREF(child);
            if (r < 0) {
                goto done;
            }
        }
        else {
            items = PyDict_Items(children);
            if (items == NULL) {
                goto done;
            }
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
                PyObject *pair = PyList_GET_ITEM(items, i);
                if (draft_finish_into(f, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1),
                                      path, touched, &one_key, &one_final, &more)
                    < 0) {
                    goto done;
                }
            }
        }
        value = draft_apply(f, value, one_key, one_final, more);
        if (value == NULL || (f->memoize && PyDict_SetItem(f->memo, ident, value) < 0)) {
            goto done;
        }
    }
    int emit = path != Py_None && touched != Py_None ? PyObject_IsTrue(touched) : 0;
    if (emit < 0) {
        goto done;
    }
    if (!emit) {
        result = Py_NewRef(value);
        goto done;
    }
    /* The operations of the keys this draft changed. */
    result = draft_emit_keys(f, d, value, path, touched);
done:
    Py_XDECREF(value);
    Py_XDECREF(children);
    Py_XDECREF(touched);
    Py_XDECREF(ident);
    Py_XDECREF(items);
    Py_XDECREF(one_key);
    Py_XDECREF(one_final);
    Py_XDECREF(more);
    Py_LeaveRecursiveCall();
    return result;
}

/* --- the scope's class methods (drafts.py's entry points) ------------------ */

static PyObject *
draft_scope_py_finish(PyObject *cls, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("_finish", nargs, 3, 3) < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type((PyTypeObject *)cls);
    if (st->drafts == NULL) {
        return draft_call(st, DR_FINISH, args[0], args[1], args[2], NULL, NULL);
    }
    PyObject *draft = args[0], *memo = args[1], *path = args[2];
    if (memo != Py_None && !PyDict_Check(memo)) {
        return draft_call(st, DR_FINISH, draft, memo, path, NULL, NULL);
    }
    draft_finishing f = {st, Py_NewRef(st->drafts), memo, 0, NULL, NULL};
    if (memo != Py_None && PyObject_TypeCheck(draft, st->dict_draft_type)) {
        PyObject *scope = ((draft_dict *)draft)->scope;
        f.memoize = scope == NULL || !PyObject_TypeCheck(scope, st->draft_scope_type)
                    || ((draft_scope *)scope)->shared;
    }
    else {
        f.memoize = memo != Py_None;
    }
    PyObject *result = draft_finish(&f, draft, path);
    Py_DECREF(f.reg);
    Py_XDECREF(f.forward);
    Py_XDECREF(f.undo);
    return result;
}

/* drafts.py's _patches(root): the end of a produce_with_patches whose
 * recipe kept its draft, (new, patches, inverse patches).  The _Memo is
 * made only if a node needs it (a shared scope, or a call into drafts.py). */
static PyObject *
draft_scope_py_patches(PyObject *cls, PyObject *root)
{
    fm_state *st = fm_state_of_type((PyTypeObject *)cls);
    if (st->drafts == NULL) {
        PyErr_SetString(PyExc_TypeError, "drafts are made by frozenmap.produce()");
        return NULL;
    }
    draft_finishing f = {st, Py_NewRef(st->drafts), NULL, 1, PyList_New(0), PyList_New(0)};
    PyObject *result = NULL, *path = NULL;
    if (f.forward == NULL || f.undo == NULL) {
        goto done;
    }
    if (PyObject_TypeCheck(root, st->dict_draft_type)) {
        PyObject *scope = ((draft_dict *)root)->scope;
        f.memoize = scope == NULL || !PyObject_TypeCheck(scope, st->draft_scope_type)
                    || ((draft_scope *)scope)->shared;
    }
    path = PyUnicode_FromStringAndSize("", 0);
    if (path == NULL || (f.memoize && draft_memo(&f) == NULL)) {
        goto done;
    }
    PyObject *new = draft_finish(&f, root, path);
    if (new == NULL) {
        goto done;
    }
    if (PyList_Reverse(f.undo) == 0) {
        result = PyTuple_Pack(3, new, f.forward, f.undo);
    }
    Py_DECREF(new);
done:
    Py_XDECREF(path);
    Py_XDECREF(f.memo);
    Py_XDECREF(f.forward);
    Py_XDECREF(f.undo);
    Py_DECREF(f.reg);
    return result;
}

static PyObject *
draft_scope_py_root(PyObject *cls, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("_root", nargs, 2, 2) < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type((PyTypeObject *)cls);
    if (st->drafts == NULL) {
        PyErr_SetString(PyExc_TypeError, "drafts are made by frozenmap.produce()");
        return NULL;
    }
    PyObject *base = args[0];
    int recording = PyObject_IsTrue(args[1]);
    if (recording < 0) {
        return NULL;
    }
    PyObject *reg = Py_NewRef(st->drafts);
    PyTypeObject *scope_class = (PyTypeObject *)REG(reg, DR_SCOPE_CLASS);
    PyObject *root = NULL;
    PyObject *ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    draft_scope *scope =
        ident == NULL ? NULL : (draft_scope *)scope_class->tp_alloc(scope_class, 0);
    if (scope != NULL) {
        scope->reader = Py_NewRef(ident);
        scope->writer = Py_NewRef(ident);
        scope->edits = 0;
        scope->recording = (char)recording;
        scope->shared = 0;
        int tuple = PyTuple_CheckExact(base);
        scope->frozendict =
            Py_NewRef(tuple ? (PyObject *)st->frozendict_type : (PyObject *)Py_TYPE(base));
        root = tuple ? draft_list_new(reg, (PyObject *)scope, base)
                     : draft_dict_new(reg, (PyObject *)scope, base);
    }
    Py_XDECREF(scope);
    Py_XDECREF(ident);
    Py_DECREF(reg);
    return root;
}

static PyObject *
draft_scope_py_register(PyObject *cls, PyObject *args)
{
    fm_state *st = fm_state_of_type((PyTypeObject *)cls);
    if (!PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != DR_REGISTERED) {
        PyErr_Format(PyExc_TypeError, "_register takes %d arguments", (int)DR_REGISTERED);
        return NULL;
    }
    for (int i = DR_SCOPE_CLASS; i <= DR_LIST_CLASS; i++) {
        PyTypeObject *base = i == DR_SCOPE_CLASS  ? st->draft_scope_type
                             : i == DR_DICT_CLASS ? st->dict_draft_type
                                                  : st->list_draft_type;
        PyObject *given = PyTuple_GET_ITEM(args, i);
        if (!PyType_Check(given) || !PyType_IsSubtype((PyTypeObject *)given, base)
            || ((PyTypeObject *)given)->tp_basicsize != base->tp_basicsize) {
            PyErr_Format(PyExc_TypeError,
                         "_register: argument %d must be a subclass of %s "
                         "adding no fields",
                         i + 1, base->tp_name);
            return NULL;
        }
    }
    if (!PyDict_Check(PyTuple_GET_ITEM(args, DR_DRAFTABLE))) {
        PyErr_SetString(PyExc_TypeError, "_register: the draftable types are a dict");
        return NULL;
    }
    PyObject *reg = PyTuple_New(DR_COUNT);
    if (reg == NULL) {
        return NULL;
    }
    for (int i = 0; i < DR_REGISTERED; i++) {
        PyTuple_SET_ITEM(reg, i, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    }
    for (int i = DR_REGISTERED; i < DR_REPLACE_TEMPLATE; i++) {
        PyObject *name = PyUnicode_InternFromString(draft_names[i - DR_REGISTERED]);
        if (name == NULL) {
            Py_DECREF(reg);
            return NULL;
        }
        PyTuple_SET_ITEM(reg, i, name);
    }
    /* The operations' templates: a copy of one is cheaper to fill than a
     * new dict is to build, and keeps the keys in the order drafts.py
     * writes them. */
    int ops[3] = {DR_STR_REPLACE, DR_STR_ADD, DR_STR_REMOVE};
    for (int i = 0; i < 3; i++) {
        PyObject *template = PyDict_New();
        if (template == NULL) {
            Py_DECREF(reg);
            return NULL;
        }
        PyTuple_SET_ITEM(reg, DR_REPLACE_TEMPLATE + i, template);
        if (PyDict_SetItem(template, REG(reg, DR_STR_OP), REG(reg, ops[i])) < 0
            || PyDict_SetItem(template, REG(reg, DR_STR_PATH), Py_None) < 0
            || (ops[i] != DR_STR_REMOVE
                && PyDict_SetItem(template, REG(reg, DR_STR_VALUE), Py_None) < 0)) {
            Py_DECREF(reg);
            return NULL;
        }
    }
    Py_XSETREF(st->drafts, reg);
    Py_RETURN_NONE;
}

static PyMethodDef draft_scope_methods[] = {
    {"_register", (PyCFunction)draft_scope_py_register, METH_VARARGS | METH_CLASS,
     "Register drafts.py's classes and functions with the C paths."},
    {"_root", (PyCFunction)(void (*)(void))draft_scope_py_root, METH_FASTCALL | METH_CLASS,
     "_root(base, recording): a new scope's root draft of base."},
    {"_patches", draft_scope_py_patches, METH_O | METH_CLASS,
     "_patches(root): drafts.py's _patches."},
    {"_finish", (PyCFunction)(void (*)(void))draft_scope_py_finish, METH_FASTCALL | METH_CLASS,
     "_finish(draft, memo, path): drafts.py's _finish."},
    {NULL, NULL, 0, NULL},
};

/* --- fields, GC ----------------------------------------------------------- */

#define DRAFT_FIELD(name, type, field) \
  { \
    name, T_OBJECT_EX, offsetof(type, field), 0, NULL \
  }

static PyMemberDef draft_scope_members[] = {
    DRAFT_FIELD("reader", draft_scope, reader),
    DRAFT_FIELD("writer", draft_scope, writer),
    DRAFT_FIELD("frozendict", draft_scope, frozendict),
    {"edits", T_PYSSIZET, offsetof(draft_scope, edits), 0, NULL},
    {"recording", T_BOOL, offsetof(draft_scope, recording), 0, NULL},
    {"shared", T_BOOL, offsetof(draft_scope, shared), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMemberDef draft_dict_members[] = {
    DRAFT_FIELD("_scope", draft_dict, scope),
    DRAFT_FIELD("_base", draft_dict, base),
    DRAFT_FIELD("_map", draft_dict, map),
    DRAFT_FIELD("_children", draft_dict, children),
    DRAFT_FIELD("_touched", draft_dict, touched),
    DRAFT_FIELD("_first", draft_dict, first),
    {NULL, 0, 0, 0, NULL},
};

static PyMemberDef draft_list_members[] = {
    DRAFT_FIELD("_scope", draft_list, scope), DRAFT_FIELD("_base", draft_list, base),
    DRAFT_FIELD("_items", draft_list, items), DRAFT_FIELD("_children", draft_list, children),
    DRAFT_FIELD("_log", draft_list, log),     {NULL, 0, 0, 0, NULL},
};

/* Each type's fields are PyObject pointers from `first` to the end of the
 * object (edits and the flags of a scope excepted, which follow them). */
static int
draft_fields_traverse(PyObject *op, PyObject **fields, int n, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    for (int i = 0; i < n; i++) {
        Py_VISIT(fields[i]);
    }
    return 0;
}

/* Clear the fields (a cleared draft or scope is an empty, unusable one:
 * each use goes to drafts.py, which finds the fields unset). */
static void
draft_fields_clear(PyObject **fields, int n)
{
    for (int i = 0; i < n; i++) {
        Py_CLEAR(fields[i]);
    }
}

#define DRAFT_NFIELDS(type, first) \
  ((int)((sizeof(type) - offsetof(type, first)) / sizeof(PyObject *)))
#define SCOPE_NFIELDS 3

static int
draft_scope_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    return draft_fields_traverse(op, &((draft_scope *)op)->reader, SCOPE_NFIELDS, visit, arg);
}

static int
draft_scope_tp_clear(PyObject *op)
{
    draft_fields_clear(&((draft_scope *)op)->reader, SCOPE_NFIELDS);
    return 0;
}

static int
draft_dict_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    return draft_fields_traverse(op, &((draft_dict *)op)->scope,
                                 DRAFT_NFIELDS(draft_dict, scope), visit, arg);
}

static int
draft_dict_tp_clear(PyObject *op)
{
    draft_fields_clear(&((draft_dict *)op)->scope, DRAFT_NFIELDS(draft_dict, scope));
    return 0;
}

static int
draft_list_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    return draft_fields_traverse(op, &((draft_list *)op)->scope,
                                 DRAFT_NFIELDS(draft_list, scope), visit, arg);
}

static int
draft_list_tp_clear(PyObject *op)
{
    draft_fields_clear(&((draft_list *)op)->scope, DRAFT_NFIELDS(draft_list, scope));
    return 0;
}

#define DRAFT_DEALLOC(name, clear) \
  static void name(PyObject *op) \
  { \
    PyTypeObject *tp = Py_TYPE(op); \
    PyObject_GC_UnTrack(op); \
    Py_TRASHCAN_BEGIN(op, name) \
    clear(op); \
    tp->tp_free(op); \
    Py_DECREF(tp); \
    Py_TRASHCAN_END \
  }

DRAFT_DEALLOC(draft_scope_tp_dealloc, draft_scope_tp_clear)
DRAFT_DEALLOC(draft_dict_tp_dealloc, draft_dict_tp_clear)
DRAFT_DEALLOC(draft_list_tp_dealloc, draft_list_tp_clear)

static PyType_Slot draft_scope_slots[] = {
    {Py_tp_dealloc, draft_scope_tp_dealloc},
    {Py_tp_traverse, draft_scope_tp_traverse},
    {Py_tp_clear, draft_scope_tp_clear},
    {Py_tp_members, draft_scope_members},
    {Py_tp_methods, draft_scope_methods},
    {Py_tp_doc, "The fields of frozenmap.drafts._Scope (one produce() call)."},
    {0, NULL},
};

static PyType_Slot draft_dict_slots[] = {
    {Py_tp_dealloc, draft_dict_tp_dealloc},
    {Py_tp_traverse, draft_dict_tp_traverse},
    {Py_tp_clear, draft_dict_tp_clear},
    {Py_tp_members, draft_dict_members},
    {Py_mp_subscript, draft_dict_tp_subscript},
    {Py_mp_ass_subscript, draft_dict_tp_ass_subscript},
    {Py_tp_doc, "The fields and the item access of frozenmap.drafts.DictDraft."},
    {0, NULL},
};

static PyType_Slot draft_list_slots[] = {
    {Py_tp_dealloc, draft_list_tp_dealloc},
    {Py_tp_traverse, draft_list_tp_traverse},
    {Py_tp_clear, draft_list_tp_clear},
    {Py_tp_members, draft_list_members},
    {Py_tp_doc, "The fields of frozenmap.drafts.ListDraft."},
    {0, NULL},
};

static PyType_Spec draft_scope_spec = {
    .name = "frozenmap._ccore._cfrozenmap._DraftScope",
    .basicsize = sizeof(draft_scope),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .slots = draft_scope_slots,
};

static PyType_Spec draft_dict_spec = {
    .name = "frozenmap._ccore._cfrozenmap._DictDraft",
    .basicsize = sizeof(draft_dict),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_MAPPING,
    .slots = draft_dict_slots,
};

static PyType_Spec draft_list_spec = {
    .name = "frozenmap._ccore._cfrozenmap._ListDraft",
    .basicsize = sizeof(draft_list),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_SEQUENCE,
    .slots = draft_list_slots,
};

int
draft_module_exec(PyObject *module, fm_state *st)
{
    PyType_Spec *specs[3] = {&draft_scope_spec, &draft_dict_spec, &draft_list_spec};
    PyTypeObject **slots[3] = {&st->draft_scope_type, &st->dict_draft_type,
                               &st->list_draft_type};
    for (int i = 0; i < 3; i++) {
        PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(module, specs[i], NULL);
        if (tp == NULL || PyModule_AddType(module, tp) < 0) {
            Py_XDECREF(tp);
            return -1;
        }
        *slots[i] = tp;
    }
    return 0;
}
