"""Regenerate frozenmap/_ccore/docstrings.h from the pure core: the C core's
docstrings and method signatures.

Both cores carry the same text.  For each public method of the pure core's
``frozendict`` and ``Evolver`` (and the dunders in ``DUNDERS``) the header
defines ``FD_DOC_<NAME>`` / ``EV_DOC_<NAME>``: the ``__text_signature__``
line CPython reads from a C method's doc (``get($self, key, default=None,
/)`` then ``--``), made from the pure method's ``inspect.signature``, then
its docstring.  The C method tables use these macros as the whole doc, so no
signature is written by hand; ``FD_DOC_TYPE`` / ``EV_DOC_TYPE`` are the
classes' docstrings.

    python scripts/gen_docstrings.py           # rewrite docstrings.h
    python scripts/gen_docstrings.py --check   # exit 1 if it is stale

It reads the pure core of the checkout it sits in, whichever Python runs it
(the checkout goes first on ``sys.path``, with ``FROZENMAP_PURE_PYTHON=1`` so
that no C build is loaded), and refuses to run when ``frozenmap`` would come
from anywhere else, such as an installed copy.
"""

import ast
import inspect
import json
import os
import pathlib
import sys
from typing import Any, List, Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "frozenmap" / "_ccore" / "docstrings.h"
#: The special methods the C core defines as methods (not slots): their C
#: doc is generated too, so that their __text_signature__ words a wrong call
#: as the pure twin's (frozenmap/_cold.py, wrong_call).  A doc of its own,
#: if any, follows the signature.
DUNDERS = (
    "__replace__", "__reduce_ex__", "__reduce__", "__getnewargs__", "__copy__",
    "__deepcopy__", "__class_getitem__", "__reversed__", "__length_hint__",
)  # fmt: skip


def import_checkout_pure_core() -> Any:
    """The checkout's ``frozenmap._pycore``; exits with a message if the import
    resolves to another copy of frozenmap (an installed one, say)."""
    os.environ["FROZENMAP_PURE_PYTHON"] = "1"
    sys.path.insert(0, str(ROOT))
    try:
        from frozenmap import _pycore
    except ImportError as exc:
        sys.exit(
            "gen_docstrings.py: cannot import frozenmap._pycore from the checkout %s (%s)"
            % (ROOT, exc)
        )
    found = pathlib.Path(_pycore.__file__).resolve().parent
    wanted = ROOT / "frozenmap" / "_pycore"
    if found != wanted:
        sys.exit(
            "gen_docstrings.py: it must read the pure core of the checkout it sits in "
            "(%s), but 'import frozenmap' gives %s, another copy (an installed one?).  "
            "Run the script of the checkout whose docstrings.h you mean to write." % (wanted, found)
        )
    return _pycore


def _default(value: Any) -> str:
    """A default as a text signature writes it: its repr when that reads back
    as the same value, else ``<unrepresentable>`` (CPython's word for a
    sentinel)."""
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError):
        same = False
    return text if same else "<unrepresentable>"


def text_signature(cls: type, name: str) -> Optional[str]:
    """``name($self, ...)`` for the pure ``cls.name``, as a C method's doc
    carries it, without annotations; None for what is not a method.

    >>> class Demo:
    ...     def get(self, key: str, default: int = 0, /) -> int: ...
    ...     def patch(self, path, /, *args, deep=False, **kwargs): ...
    ...     @classmethod
    ...     def build(cls, items, value=None, /): ...
    >>> text_signature(Demo, "get")
    'get($self, key, default=0, /)'
    >>> text_signature(Demo, "patch")
    'patch($self, path, /, *args, deep=False, **kwargs)'
    >>> text_signature(Demo, "build")
    'build($type, items, value=None, /)'
    """
    raw = inspect.getattr_static(cls, name)
    first = "$type" if isinstance(raw, classmethod) else "$self"
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
    if not inspect.isfunction(func):
        return None
    params = list(inspect.signature(func).parameters.values())
    if isinstance(raw, staticmethod):
        first = ""
    out: List[str] = []
    positional_only = False
    star = False
    for i, param in enumerate(params):
        if param.kind is param.POSITIONAL_ONLY:
            positional_only = True
        elif positional_only:
            out.append("/")
            positional_only = False
        if param.kind is param.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        if i == 0 and first:
            text = first
        elif param.kind is param.VAR_POSITIONAL:
            text, star = "*" + param.name, True
        elif param.kind is param.VAR_KEYWORD:
            text = "**" + param.name
        else:
            text = param.name
        if param.default is not param.empty:
            text += "=" + _default(param.default)
        out.append(text)
    if positional_only:
        out.append("/")
    return "%s(%s)" % (name, ", ".join(out))


def c_string(text: str) -> str:
    return "\n".join("    " + json.dumps(line + "\n") for line in text.split("\n"))[:-3] + '"'


def _doc_of(cls: type, name: str) -> str:
    """The C doc of the method ``name`` of ``cls``: its text signature line,
    ``--``, then its docstring (a special method's own only: no inherited
    one)."""
    signature = text_signature(cls, name)
    if name.startswith("__"):
        own = inspect.getattr_static(cls, name)
        doc = inspect.cleandoc(getattr(own, "__func__", own).__doc__ or "")
    else:
        doc = inspect.getdoc(getattr(cls, name)) or ""
    return "%s\n--\n\n%s" % (signature, doc) if signature else doc


def _macro(prefix: str, macro: str, doc: str) -> List[str]:
    """The lines defining ``<prefix>_DOC_<macro>`` as ``doc`` (none if empty)."""
    if not doc:
        return []
    return ["#define %s_DOC_%s \\" % (prefix, macro), c_string(doc).replace("\n", " \\\n"), ""]


def render(pycore: Any) -> str:
    lines = [
        "/* docstrings.h -- GENERATED by scripts/gen_docstrings.py from the pure core's",
        " * docstrings and signatures, so both cores carry the same text.  Do not edit",
        " * by hand.  A method's macro starts with its __text_signature__ line. */",
        "#ifndef FROZENMAP_DOCSTRINGS_H",
        "#define FROZENMAP_DOCSTRINGS_H",
        "",
    ]
    views = pycore.views
    # (prefix, classes): the three views share their C method tables, so a
    # method they share gets one macro (the generator stops if the views'
    # copies of it differ).
    groups = (
        ("FD", (pycore.frozendict,)),
        ("EV", (pycore.Evolver,)),
        ("VIEW", (views.frozendict_keys, views.frozendict_values, views.frozendict_items)),
        ("ITER", (views.frozendict_iterator,)),
    )
    for prefix, classes in groups:
        if prefix in ("FD", "EV"):  # (the views' and iterator's are written in C)
            lines += _macro(prefix, "TYPE", inspect.cleandoc(classes[0].__doc__ or ""))
        names = sorted({k for cls in classes for k in vars(cls) if not k.startswith("_")})
        names += [d for d in DUNDERS if any(d in vars(cls) for cls in classes)]
        for name in names:
            texts = {_doc_of(cls, name) for cls in classes if name in vars(cls)}
            if len(texts) != 1:
                sys.exit("gen_docstrings.py: the %s of %s differ: %s" % (name, prefix, texts))
            macro = "DUNDER_" + name.strip("_").upper() if name.startswith("__") else name.upper()
            lines += _macro(prefix, macro, texts.pop())
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def main() -> None:
    text = render(import_checkout_pure_core())
    if "--check" in sys.argv[1:]:
        if OUT.read_text() != text:
            print("%s is stale: run python scripts/gen_docstrings.py" % OUT)
            sys.exit(1)
        print("%s matches the pure core's docstrings and signatures" % OUT.name)
        return
    OUT.write_text(text)
    print("wrote %s" % OUT)


if __name__ == "__main__":
    main()
