"""Build script for the optional C core.

The C extension ``frozenmap._ccore._cfrozenmap`` is built when a compiler is
available.  A failed build falls back to the pure-Python core, unless
``FROZENMAP_REQUIRE_C=1`` is set (CI sets it), in which case the failure stops
the install.  ``FROZENMAP_PURE_PYTHON=1`` skips the C build entirely.

pip hides a build's output when it succeeds, so a fallback is also recorded
in the package, as ``frozenmap/_ccore/_build_status.txt`` ("failed: why" or
"intended: why"): ``import frozenmap`` warns with the reason after a failed
build, and ``python -m frozenmap`` prints it.  A failed build also deletes the
extension left in ``build/`` by an earlier one, so a stale copy is never
shipped as if the build had worked.

The wheel holds what runs: the C sources and the docstring generator stay in
the sdist (``MANIFEST.in``).
"""

import os
import platform
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

STATUS_FILE = os.path.join("frozenmap", "_ccore", "_build_status.txt")


def _flag(name):
    return os.environ.get(name, "") not in ("", "0")


def _c_core_intended():
    return not _flag("FROZENMAP_PURE_PYTHON") and platform.python_implementation() == "CPython"


def _write_status(build_lib, text):
    path = os.path.join(build_lib, STATUS_FILE)
    if text is None:
        if os.path.exists(path):
            os.remove(path)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text + "\n")


class BuildPy(build_py):
    """build_py that records an intended pure build."""

    def run(self):
        super().run()
        if _c_core_intended():
            _write_status(self.build_lib, None)  # build_ext records a failure
            return
        # No extension this time: drop one an earlier build left in build/.
        ccore = os.path.join(self.build_lib, "frozenmap", "_ccore")
        for name in os.listdir(ccore) if os.path.isdir(ccore) else ():
            if name.startswith("_cfrozenmap.") and name.endswith((".so", ".pyd")):
                os.remove(os.path.join(ccore, name))
        if _flag("FROZENMAP_PURE_PYTHON"):
            why = "FROZENMAP_PURE_PYTHON=1 was set when frozenmap was built"
        else:
            why = "built for %s, which uses the pure-Python core" % platform.python_implementation()
        _write_status(self.build_lib, "intended: " + why)


def _why_command_failed(cmd, env):
    """One line saying why a compiler or linker command failed: "no C compiler
    found", or the tool's own last error line (it is run again, its output
    captured: the build's own run printed it to a log pip hides)."""
    tool = os.path.basename(cmd[0])
    path = (env or os.environ).get("PATH")
    if shutil.which(cmd[0], path=path) is None:
        return "no C compiler found (looked for %r)" % (cmd[0],)
    try:
        done = subprocess.run(
            cmd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return "%s: %s" % (tool, exc)
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    said = (errors or lines or [""])[-1]
    if said:
        return "%s: %s" % (tool, said)
    return "%s failed with exit code %d and printed nothing" % (tool, done.returncode)


class OptionalBuildExt(build_ext):
    """build_ext that degrades to the pure-Python core instead of failing.

    A failure is recorded as one line a user can act on: "no C compiler
    found (looked for 'gcc')" or the compiler's own last error line, never the
    whole command line.
    """

    def run(self):
        _write_status("" if self.inplace else self.build_lib, None)
        try:
            super().run()
        except Exception as exc:  # pragma: no cover - depends on the machine
            self._give_up(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # pragma: no cover - depends on the machine
            self._give_up(exc)

    def _failed_command(self, exc):
        """The command line that failed, from the exception or its causes
        (setuptools wraps subprocess's CalledProcessError), else the
        compiler's own command."""
        seen = set()
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            for arg in (exc, *getattr(exc, "args", ())):
                cmd = getattr(arg, "cmd", None)
                if isinstance(cmd, (list, tuple)) and cmd:
                    return list(cmd)
            exc = exc.__cause__ or exc.__context__
        compiler_so = getattr(self.compiler, "compiler_so", None)
        return list(compiler_so) if compiler_so else None

    def _give_up(self, exc):
        if _flag("FROZENMAP_REQUIRE_C"):
            raise
        for ext in self.extensions:
            stale = self.get_ext_fullpath(ext.name)
            if os.path.exists(stale):
                os.remove(stale)
        cmd = self._failed_command(exc)
        reason = (
            _why_command_failed(cmd, None)
            if cmd
            else " ".join(str(exc).split()) or type(exc).__name__
        )
        if len(reason) > 160:
            reason = reason[:157] + "..."
        _write_status("" if self.inplace else self.build_lib, "failed: " + reason)
        sys.stderr.write(
            "WARNING: frozenmap's C core could not be built (%s); "
            "the pure-Python core will be used.\n" % (reason,)
        )


def _extensions():
    if not _c_core_intended():
        return []
    src = os.path.join("frozenmap", "_ccore")
    if not os.path.isdir(src):
        return []
    sources = sorted(os.path.join(src, name) for name in os.listdir(src) if name.endswith(".c"))
    if not sources:
        return []
    extra_compile_args = [
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter",
        "-Wno-missing-field-initializers",
    ]
    extra_link_args = []
    cflags = os.environ.get("FROZENMAP_EXTRA_CFLAGS", "")
    if cflags:
        extra_compile_args += cflags.split()
        extra_link_args += cflags.split()
    elif sys.platform.startswith("linux"):
        # A release build: no debug information, symbols stripped (the .so
        # shrinks about ten times).  FROZENMAP_EXTRA_CFLAGS (the sanitizer
        # and debug checks set it) keeps the interpreter's -g.
        extra_compile_args.append("-g0")
        extra_link_args.append("-s")
    return [
        Extension(
            "frozenmap._ccore._cfrozenmap",
            sources=sources,
            depends=[os.path.join(src, n) for n in os.listdir(src) if n.endswith(".h")],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPy})
