"""Build script for the optional C core.

The C extension ``frozenmap._ccore._cfrozenmap`` is built when a compiler is
available.  A failed build falls back to the pure-Python core with a warning,
unless ``FROZENMAP_REQUIRE_C=1`` is set (CI sets it), in which case the failure
stops the install.  ``FROZENMAP_PURE_PYTHON=1`` skips the C build entirely.
"""

import os
import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _flag(name):
    return os.environ.get(name, "") not in ("", "0")


class OptionalBuildExt(build_ext):
    """build_ext that degrades to the pure-Python core instead of failing."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # pragma: no cover - depends on the machine
            self._give_up(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # pragma: no cover - depends on the machine
            self._give_up(exc)

    def _give_up(self, exc):
        if _flag("FROZENMAP_REQUIRE_C"):
            raise
        sys.stderr.write(
            "WARNING: frozenmap's C core could not be built (%s); "
            "the pure-Python core will be used.\n" % (exc,)
        )


def _extensions():
    if _flag("FROZENMAP_PURE_PYTHON") or platform.python_implementation() != "CPython":
        return []
    src = os.path.join("frozenmap", "_ccore")
    if not os.path.isdir(src):
        return []
    sources = sorted(
        os.path.join(src, name) for name in os.listdir(src) if name.endswith(".c")
    )
    if not sources:
        return []
    extra_compile_args = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                          "-Wno-missing-field-initializers"]
    extra_link_args = []
    cflags = os.environ.get("FROZENMAP_EXTRA_CFLAGS", "")
    if cflags:
        extra_compile_args += cflags.split()
        extra_link_args += cflags.split()
    return [
        Extension(
            "frozenmap._ccore._cfrozenmap",
            sources=sources,
            depends=[os.path.join(src, n) for n in os.listdir(src) if n.endswith(".h")],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
