/* module.c -- frozenmap._ccore._cfrozenmap: module state, multi-phase
 * initialisation.  The extension has no mutable global state.  The essay
 * explaining the algorithm is at the top of frozendict.c. */
#include "cfrozenmap.h"

/* --- module state ---------------------------------------------------------- */

static inline fm_state *
fm_state_of_module(PyObject *module)
{
    return (fm_state *)PyModule_GetState(module);
}

fm_state *
fm_find_state(PyTypeObject *tp)
{
    /* PyType_GetModuleByDef without the exception when tp is not ours. */
    PyObject *mro = tp->tp_mro;
    if (mro == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(mro);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        if (!(base->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
            continue;
        }
        PyObject *module = ((PyHeapTypeObject *)base)->ht_module;
        if (module != NULL && PyModule_GetDef(module) == &fm_module_def) {
            return fm_state_of_module(module);
        }
    }
    return NULL;
}

fm_state *
fm_state_of_type(PyTypeObject *tp)
{
    PyObject *module = ((PyHeapTypeObject *)tp)->ht_module;
    if (FM_LIKELY((tp->tp_flags & Py_TPFLAGS_HEAPTYPE) && module != NULL
                  && PyModule_GetDef(module) == &fm_module_def)) {
        return fm_state_of_module(module);
    }
    return fm_find_state(tp);
}

/* --- what a type really is (see cfrozenmap.h) ------------------------------ */

const char *
fm_tp_name_tail(PyTypeObject *tp)
{
    const char *dot = strrchr(tp->tp_name, '.');
    return dot != NULL ? dot + 1 : tp->tp_name;
}

int
fm_getattr_optional(PyObject *obj, PyObject *name, PyObject **out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            *out = NULL;
            return 0;
        }
        return -1;
    }
    *out = v;
    return 1;
}

PyObject *
fm_type_fullname(PyTypeObject *tp)
{
    /* CPython's type_fullyqualname (what %T prints, 3.13+). */
    if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        return PyUnicode_FromString(tp->tp_name);
    }
    /* Both names held: the allocations below can start a GC pass, whose
     * finalizers may rebind the type's __qualname__ or __module__. */
    PyObject *qualname = Py_NewRef(((PyHeapTypeObject *)tp)->ht_qualname);
    PyObject *key = PyUnicode_InternFromString("__module__");
    if (key == NULL) {
        Py_DECREF(qualname);
        return NULL;
    }
    /* The type's own __module__. */
    PyObject *module = Py_XNewRef(PyDict_GetItemWithError(tp->tp_dict, key));
    Py_DECREF(key);
    PyObject *result = NULL;
    if (module == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (module != NULL && PyUnicode_Check(module)
        && PyUnicode_CompareWithASCIIString(module, "builtins") != 0
        && PyUnicode_CompareWithASCIIString(module, "__main__") != 0) {
        result = PyUnicode_FromFormat("%U.%U", module, qualname);
    }
    else {
        result = Py_NewRef(qualname);
    }
done:
    Py_XDECREF(module);
    Py_DECREF(qualname);
    return result;
}

PyObject *
fm_type_lookup(PyTypeObject *tp, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL) {
        return NULL;
    }
    PyObject *r = _PyType_Lookup(tp, key);
    Py_DECREF(key);
    return r;
}

void
fm_set_key_error(PyObject *key)
{
    /* KeyError(key) made explicitly: a tuple key must not become the
     * exception's args. */
    PyObject *exc = PyObject_CallOneArg(PyExc_KeyError, key);
    if (exc != NULL) {
        PyErr_SetObject(PyExc_KeyError, exc);
        Py_DECREF(exc);
    }
}

PyObject *
fm_lookup_special(PyObject *obj, const char *name)
{
    PyObject *attr = fm_type_lookup(Py_TYPE(obj), name);
    if (attr == NULL) {
        return NULL;
    }
    descrgetfunc get = Py_TYPE(attr)->tp_descr_get;
    if (get == NULL) {
        return Py_NewRef(attr);
    }
    Py_INCREF(attr); /* the binding may run code that drops it from the type */
    PyObject *bound = get(attr, obj, (PyObject *)Py_TYPE(obj));
    Py_DECREF(attr);
    return bound;
}

static int
fm_traverse(PyObject *module, visitproc visit, void *arg)
{
    fm_state *st = fm_state_of_module(module);
    Py_VISIT(st->frozendict_type);
    Py_VISIT(st->evolver_type);
    Py_VISIT(st->order_type);
    Py_VISIT(st->keys_type);
    Py_VISIT(st->values_type);
    Py_VISIT(st->items_type);
    Py_VISIT(st->iter_type);
    Py_VISIT(st->diff_type);
    Py_VISIT(st->restore);
    Py_VISIT(st->restore_evolver);
    Py_VISIT(st->registry);
    Py_VISIT(st->view_set_ops);
    Py_VISIT(st->builtin_iter);
    Py_VISIT(st->draft_scope_type);
    Py_VISIT(st->dict_draft_type);
    Py_VISIT(st->list_draft_type);
    Py_VISIT(st->drafts);
    return 0;
}

static int
fm_clear(PyObject *module)
{
    fm_state *st = fm_state_of_module(module);
    order_free_lists_clear(st);
    Py_CLEAR(st->frozendict_type);
    Py_CLEAR(st->evolver_type);
    Py_CLEAR(st->order_type);
    Py_CLEAR(st->keys_type);
    Py_CLEAR(st->values_type);
    Py_CLEAR(st->items_type);
    Py_CLEAR(st->iter_type);
    Py_CLEAR(st->diff_type);
    Py_CLEAR(st->restore);
    Py_CLEAR(st->restore_evolver);
    Py_CLEAR(st->registry);
    Py_CLEAR(st->view_set_ops);
    Py_CLEAR(st->builtin_iter);
    Py_CLEAR(st->str_keys);
    Py_CLEAR(st->str_items);
    Py_CLEAR(st->draft_scope_type);
    Py_CLEAR(st->dict_draft_type);
    Py_CLEAR(st->list_draft_type);
    Py_CLEAR(st->drafts);
    return 0;
}

static void
fm_free(void *module)
{
    fm_clear((PyObject *)module);
}

/* --- initialisation -------------------------------------------------------- */

/* Create a type.  Error messages print tp_name, which for a heap type is the
 * full spec name; the public types get the bare name ("frozendict") there,
 * as in the pure core and the builtin, while __module__ stays "frozenmap"
 * (the type owns a copy of the spec name, so tp_name may point elsewhere). */
static PyTypeObject *
fm_add_type(PyObject *module, PyType_Spec *spec, int public)
{
    PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, NULL);
    if (tp == NULL) {
        return NULL;
    }
    if (strncmp(spec->name, "frozenmap.", 10) == 0 && strchr(spec->name + 10, '.') == NULL) {
        tp->tp_name = spec->name + 10;
    }
    if (public && PyModule_AddType(module, tp) < 0) {
        Py_DECREF(tp);
        return NULL;
    }
    return tp;
}

PyObject *
fm_import_attr(const char *module, const char *name)
{
    PyObject *m = PyImport_ImportModule(module);
    if (m == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    return r;
}

PyObject *
fm_wrong_call_tuple(const char *name, PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *wrong_call = fm_import_attr("frozenmap._cold", "wrong_call");
    if (wrong_call == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallFunction(wrong_call, "sOOO", name, self, args,
                                        kwargs != NULL ? kwargs : Py_None);
    Py_DECREF(wrong_call);
    if (r != NULL) {
        Py_DECREF(r);
        PyErr_Format(PyExc_SystemError, "frozenmap: %s() was called rightly", name);
    }
    return NULL;
}

PyObject *
fm_wrong_call(const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *positional = PyTuple_New(nargs), *keywords = NULL, *r = NULL;
    if (positional == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(positional, i, Py_NewRef(args[i]));
    }
    if (nkw > 0) {
        keywords = PyDict_New();
        if (keywords == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < nkw; i++) {
            /* (a str subclass's __hash__ may run code: the caller holds
             * args and kwnames for the whole call) */
            if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
                goto done;
            }
        }
    }
    r = fm_wrong_call_tuple(name, self, positional, keywords);
done:
    Py_DECREF(positional);
    Py_XDECREF(keywords);
    return r;
}

static int
fm_register(const char *abc, PyTypeObject *tp)
{
    PyObject *cls = fm_import_attr("collections.abc", abc);
    if (cls == NULL) {
        return -1;
    }
    PyObject *r = PyObject_CallMethod(cls, "register", "O", (PyObject *)tp);
    Py_DECREF(cls);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

static int
fm_exec(PyObject *module)
{
    fm_state *st = fm_state_of_module(module);
    if ((st->order_type = fm_add_type(module, &order_node_spec, 0)) == NULL
        || (st->frozendict_type = fm_add_type(module, &fd_spec, 1)) == NULL
        || (st->evolver_type = fm_add_type(module, &evolver_spec, 1)) == NULL
        || (st->keys_type = fm_add_type(module, &view_keys_spec, 0)) == NULL
        || (st->values_type = fm_add_type(module, &view_values_spec, 0)) == NULL
        || (st->items_type = fm_add_type(module, &view_items_spec, 0)) == NULL
        || (st->iter_type = fm_add_type(module, &view_iter_spec, 0)) == NULL) {
        return -1;
    }
    /* The constructor of the exact type is a vectorcall. */
    st->frozendict_type->tp_vectorcall = fd_tp_vectorcall_ptr;

    /* case frozendict(x) binds x to the subject, as for dict(x). */
    PyObject *match_args = Py_BuildValue("(s)", "_match_self");
    if (match_args == NULL) {
        return -1;
    }
    int r =
        PyObject_SetAttrString((PyObject *)st->frozendict_type, "__match_args__", match_args);
    Py_DECREF(match_args);
    if (r < 0) {
        return -1;
    }

    /* The tries' layout, so that a test can hold the pure core's constants
     * to it (tests/test_layout_constants.py). */
    PyObject *layout = Py_BuildValue(
        "{sisisisisisisisisisi}", "champ_bits", CHAMP_BITS, "champ_mask", CHAMP_MASK,
        "champ_max_shift", CHAMP_MAX_SHIFT, "champ_max_depth", CHAMP_MAX_DEPTH,
        "order_leaf_bits", ORDER_LEAF_BITS, "order_inner_bits", ORDER_INNER_BITS,
        "order_max_shift", ORDER_MAX_SHIFT, "order_max_depth", ORDER_MAX_DEPTH,
        "order_free_sizes", ORDER_FREE_SIZES, "flat_max", FLAT_MAX);
    if (layout == NULL) {
        return -1;
    }
    r = PyModule_AddObjectRef(module, "_layout", layout);
    Py_DECREF(layout);
    if (r < 0) {
        return -1;
    }

    st->str_keys = PyUnicode_InternFromString("keys");
    st->str_items = PyUnicode_InternFromString("items");
    if (st->str_keys == NULL || st->str_items == NULL) {
        return -1;
    }
    st->registry = PyImport_ImportModule("frozenmap._registry");
    if (st->registry == NULL) {
        return -1;
    }
    if ((st->diff_type = fm_import_attr("frozenmap._diff", "Diff")) == NULL
        || (st->restore = fm_import_attr("frozenmap._common", "restore")) == NULL
        || (st->restore_evolver = fm_import_attr("frozenmap._common", "restore_evolver"))
               == NULL
        || (st->view_set_ops = fm_import_attr("frozenmap._viewsets", "ViewSetOps")) == NULL
        || (st->builtin_iter = fm_import_attr("builtins", "iter")) == NULL) {
        return -1;
    }
    PyObject *reg = PyObject_CallMethod(st->registry, "register_frozendict_type", "O",
                                        (PyObject *)st->frozendict_type);
    if (reg == NULL) {
        return -1;
    }
    Py_DECREF(reg);
    if (fm_register("KeysView", st->keys_type) < 0
        || fm_register("ItemsView", st->items_type) < 0
        || fm_register("ValuesView", st->values_type) < 0) {
        return -1;
    }
    if (draft_module_exec(module, st) < 0) {
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot fm_slots[] = {
    {Py_mod_exec, fm_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

PyModuleDef fm_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "frozenmap._ccore._cfrozenmap",
    .m_doc = "The C core of frozenmap: frozendict and Evolver on persistent tries.\n\n"
             "See the essay at the top of frozenmap/_ccore/frozendict.c.",
    .m_size = sizeof(fm_state),
    .m_slots = fm_slots,
    .m_traverse = fm_traverse,
    .m_clear = fm_clear,
    .m_free = fm_free,
};

PyMODINIT_FUNC
PyInit__cfrozenmap(void)
{
    return PyModuleDef_Init(&fm_module_def);
}
