/* paths.c -- nested paths: get_in, set_in, update_in, delete_in.  Mirrors
 * frozenmap/_pycore/paths.py (the rules are in its docstring) function by
 * function under the same names; path_py_X_in is the pure core's path_X_in,
 * the _py_ marking the method that parses Python arguments (the pure core's
 * frozendict and Evolver methods parse them and call path_X_in).
 *
 * The top of a path is a frozendict (the result is a new version) or an
 * Evolver (edited in place with one edit; the nested maps stay immutable).
 * The walk down collects the maps along the path (strong references); the
 * rebuild goes up with one derive_with ("set") per level, so every other
 * sub-map is shared and a level whose value did not change comes back as
 * the same object.  User code runs in the keys' __hash__/__eq__ and in update_in's
 * function, always between complete steps on immutable maps we hold.
 */
#include "cfrozenmap.h"

/* The keys of path: a new tuple, or NULL (TypeError for a str/bytes or a
 * non-iterable, ValueError for an empty path). */
static PyObject *
path_keys(PyObject *path)
{
    if (PyUnicode_Check(path) || PyBytes_Check(path)) {
        PyErr_Format(PyExc_TypeError, "path must be an iterable of keys, not '%s'",
                     fm_tp_name_tail(Py_TYPE(path)));
        return NULL;
    }
    PyObject *keys = PySequence_Tuple(path);
    if (keys != NULL && PyTuple_GET_SIZE(keys) == 0) {
        Py_DECREF(keys);
        PyErr_SetString(PyExc_ValueError, "path must not be empty");
        return NULL;
    }
    return keys;
}

static void
path_not_a_frozendict(Py_ssize_t index, PyObject *value)
{
    const char *hint = "";
    if (PyDict_Check(value)) {
        hint = "; frozenmap.freeze() turns nested dicts into frozendicts";
    }
    else if (PyList_Check(value) || PyTuple_Check(value)) {
        hint = "; a path goes through frozendicts only: update_in() can replace the whole "
               "sequence";
    }
    PyErr_Format(PyExc_TypeError,
                 "path[%zd] leads to a value of type '%s', not a frozendict%s", index,
                 fm_tp_name_tail(Py_TYPE(value)), hint);
}

/* The maps along a path: maps[i] holds keys[i]; maps[0] is the top. */
typedef struct {
    PyObject *small[8];
    PyObject **maps;
    Py_ssize_t n; /* how many maps are held */
} path_maps;

static int
path_maps_init(path_maps *pm, Py_ssize_t depth)
{
    pm->n = 0;
    if (depth <= (Py_ssize_t)(sizeof(pm->small) / sizeof(pm->small[0]))) {
        pm->maps = pm->small;
        return 0;
    }
    pm->maps = PyMem_New(PyObject *, depth);
    if (pm->maps == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
path_maps_free(path_maps *pm)
{
    for (Py_ssize_t i = 0; i < pm->n; i++) {
        Py_DECREF(pm->maps[i]);
    }
    if (pm->maps != pm->small) {
        PyMem_Free(pm->maps);
    }
}

/* Walk down to the map that holds the last key.  Missing maps are created
 * empty when create, else KeyError.  0 or -1. */
static int
path_walk(fm_state *st, PyObject *top, PyObject *keys, int create, path_maps *pm)
{
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (path_maps_init(pm, n) < 0) {
        return -1;
    }
    pm->maps[pm->n++] = Py_NewRef(top);
    for (Py_ssize_t i = 0; i < n - 1; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i), *child;
        fm_lookup r = mapping_get(st, pm->maps[i], key, &child);
        if (r == FM_ERROR) {
            return -1;
        }
        if (r == FM_MISSING) {
            if (!create) {
                fm_set_key_error(key);
                return -1;
            }
            child = PyObject_CallNoArgs((PyObject *)st->frozendict_type);
            if (child == NULL) {
                return -1;
            }
        }
        else if (!fm_is_frozendict(st, child)) {
            path_not_a_frozendict(i, child);
            Py_DECREF(child);
            return -1;
        }
        pm->maps[pm->n++] = child;
    }
    return 0;
}

/* Put value (a new reference, stolen) at keys[level] of maps[level], and
 * each rebuilt map into the one above; the new top, or the Evolver edited
 * (new ref), or NULL. */
static PyObject *
path_rebuild(fm_state *st, path_maps *pm, PyObject *keys, Py_ssize_t level, PyObject *value)
{
    PyObject *top = pm->maps[0];
    for (Py_ssize_t i = level; i > 0; i--) {
        PyObject *m = derive_with(st, pm->maps[i], PyTuple_GET_ITEM(keys, i), value);
        Py_DECREF(value);
        if (m == NULL) {
            return NULL;
        }
        value = m;
    }
    PyObject *key = PyTuple_GET_ITEM(keys, 0);
    if (fm_is_frozendict(st, top)) {
        PyObject *result = derive_with(st, top, key, value);
        Py_DECREF(value);
        return result;
    }
    /* An Evolver: one edit, and none when the nested map came back as is. */
    int r = (level == 0 || value != pm->maps[1]) ? PyObject_SetItem(top, key, value) : 0;
    Py_DECREF(value);
    return r < 0 ? NULL : Py_NewRef(top);
}

PyObject *
path_py_get_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *path = NULL, *dflt = Py_None;
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 2) {
        return fm_wrong_call("get_in", self, args, nargs, kwnames);
    }
    if (nargs > 0) {
        path = args[0];
    }
    if (nargs > 1) {
        dflt = args[1];
    }
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        int is_path = PyUnicode_CompareWithASCIIString(name, "path") == 0;
        if ((!is_path && PyUnicode_CompareWithASCIIString(name, "default") != 0)
            || (is_path ? nargs > 0 : nargs > 1)) {
            return fm_wrong_call("get_in", self, args, nargs, kwnames);
        }
        if (is_path) {
            path = args[nargs + i];
        }
        else {
            dflt = args[nargs + i];
        }
    }
    if (path == NULL) {
        return fm_wrong_call("get_in", self, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(self));
    PyObject *keys = path_keys(path);
    if (keys == NULL) {
        return NULL;
    }
    PyObject *m = Py_NewRef(self);
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && !fm_is_frozendict(st, m)) {
            path_not_a_frozendict(i - 1, m);
            Py_SETREF(m, NULL);
            break;
        }
        PyObject *child;
        fm_lookup r = mapping_get(st, m, PyTuple_GET_ITEM(keys, i), &child);
        Py_DECREF(m);
        if (r != FM_FOUND) {
            m = r == FM_ERROR ? NULL : Py_NewRef(dflt);
            break;
        }
        m = child;
    }
    Py_DECREF(keys);
    return m;
}

PyObject *
path_py_set_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 2, 2)) {
        return fm_wrong_call("set_in", self, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(self));
    PyObject *keys = path_keys(args[0]);
    if (keys == NULL) {
        return NULL;
    }
    path_maps pm;
    PyObject *result = NULL;
    if (path_walk(st, self, keys, 1, &pm) == 0) {
        result = path_rebuild(st, &pm, keys, PyTuple_GET_SIZE(keys) - 1, Py_NewRef(args[1]));
    }
    path_maps_free(&pm);
    Py_DECREF(keys);
    return result;
}

PyObject *
path_py_update_in(PyObject *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs < 2) {
        return fm_wrong_call_tuple("update_in", self, args, kwargs);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(self));
    PyObject *fn = PyTuple_GET_ITEM(args, 1), *dflt = NULL, *kw = NULL;
    PyObject *keys = NULL, *rest = NULL, *old = NULL, *result = NULL;
    path_maps pm = {.n = 0};
    pm.maps = pm.small;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        /* default= is update_in's own; every other keyword goes to fn. */
        kw = PyDict_Copy(kwargs);
        if (kw == NULL) {
            goto done;
        }
        /* (not PyDict_GetItemString: it hides a failure to make the name,
         * and default= would then reach fn) */
        PyObject *name = PyUnicode_FromString("default");
        if (name == NULL) {
            goto done;
        }
        dflt = Py_XNewRef(PyDict_GetItemWithError(kw, name));
        int failed = (dflt == NULL && PyErr_Occurred())
                     || (dflt != NULL && PyDict_DelItem(kw, name) < 0);
        Py_DECREF(name);
        if (failed) {
            goto done;
        }
    }
    rest = PyTuple_GetSlice(args, 2, nargs);
    keys = rest != NULL ? path_keys(PyTuple_GET_ITEM(args, 0)) : NULL;
    if (keys == NULL || path_walk(st, self, keys, dflt != NULL, &pm) < 0) {
        goto done;
    }
    Py_ssize_t last = PyTuple_GET_SIZE(keys) - 1;
    PyObject *key = PyTuple_GET_ITEM(keys, last);
    fm_lookup r = mapping_get(st, pm.maps[last], key, &old);
    if (r == FM_ERROR) {
        goto done;
    }
    if (r == FM_MISSING) {
        if (dflt == NULL) {
            fm_set_key_error(key);
            goto done;
        }
        old = Py_NewRef(dflt);
    }
    /* fn(old, *rest, **kw) */
    PyObject *call_args = PyTuple_New(PyTuple_GET_SIZE(rest) + 1);
    if (call_args == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(call_args, 0, Py_NewRef(old));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rest); i++) {
        PyTuple_SET_ITEM(call_args, i + 1, Py_NewRef(PyTuple_GET_ITEM(rest, i)));
    }
    PyObject *value = PyObject_Call(fn, call_args, kw);
    Py_DECREF(call_args);
    if (value != NULL) {
        result = path_rebuild(st, &pm, keys, last, value);
    }
done:
    path_maps_free(&pm);
    Py_XDECREF(old);
    Py_XDECREF(keys);
    Py_XDECREF(rest);
    Py_XDECREF(dflt);
    Py_XDECREF(kw);
    return result;
}

PyObject *
path_py_delete_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("delete_in", self, args, nargs, kwnames);
    }
    PyObject *path = args[0];
    fm_state *st = fm_state_of_type(Py_TYPE(self));
    PyObject *keys = path_keys(path);
    if (keys == NULL) {
        return NULL;
    }
    path_maps pm;
    PyObject *result = NULL;
    Py_ssize_t last = PyTuple_GET_SIZE(keys) - 1;
    if (path_walk(st, self, keys, 0, &pm) == 0) {
        PyObject *key = PyTuple_GET_ITEM(keys, last);
        if (last == 0 && !fm_is_frozendict(st, self)) { /* an Evolver's own key */
            result = PyObject_DelItem(self, key) < 0 ? NULL : Py_NewRef(self);
        }
        else {
            PyObject *m = derive_without(pm.maps[last], key, 0);
            if (m == NULL || last == 0) {
                result = m;
            }
            else {
                result = path_rebuild(st, &pm, keys, last - 1, m);
            }
        }
    }
    path_maps_free(&pm);
    Py_DECREF(keys);
    return result;
}
