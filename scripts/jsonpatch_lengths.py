#!/usr/bin/env python3
"""How long frozenmap's JSON Patches are against python-json-patch's.

Compares the number of operations of ``frozenmap.make_json_patch`` with that
of ``jsonpatch.make_patch`` (PyPI's ``jsonpatch``, python-json-patch) on

1. every (src, dst) pair python-json-patch's own test suite makes a patch
   for: the script downloads the jsonpatch sdist with pip
   (``pip download --no-binary :all: --no-deps jsonpatch``), checks that it
   holds the suite (``tests.py``), runs the suite once with ``make_patch``
   (and ``JsonPatch.from_diff``, which ``make_patch`` calls) recording the
   pairs they are given, and compares on each pair of JSON data;
2. random pairs of JSON documents from a seeded generator: half unrelated
   documents, half a document and a copy edited as people edit (members
   renamed, removed and added; items moved, removed, inserted; arrays
   reversed; subtrees moved elsewhere).

It prints both totals and every pair where frozenmap's patch is longer, and
checks that each of frozenmap's patches applies (``apply_json_patch(a,
patch) == b``).  Exit status 1 if a patch is longer or does not apply.

    python scripts/jsonpatch_lengths.py                 # download, run both parts
    python scripts/jsonpatch_lengths.py --sdist DIR     # an sdist (.tar.gz) or its folder
    python scripts/jsonpatch_lengths.py --random 5000 --seed 7
    python scripts/jsonpatch_lengths.py --no-suite      # random pairs only

Needs network access for the download (not with --sdist), and jsonpointer
(a dependency of jsonpatch; ``pip install '.[test]'`` brings both).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Callable, List, Tuple

from frozenmap import apply_json_patch, freeze, make_json_patch

Pair = Tuple[Any, Any]


# --- python-json-patch's suite ----------------------------------------------------------


def fetch_sdist(into: Path) -> Path:
    """Download the jsonpatch sdist into ``into``; its unpacked folder."""
    command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    command += ["--dest", str(into), "--quiet", "jsonpatch"]
    subprocess.run(command, check=True)
    archives = sorted(into.glob("jsonpatch-*.tar.gz"))
    if not archives:
        raise SystemExit("pip downloaded no jsonpatch-*.tar.gz into %s" % into)
    return unpack(archives[-1], into)


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(
            into
        )
    return into / archive.name[: -len(".tar.gz")]


def record_pairs(folder: Path) -> Tuple[Any, List[Pair], str]:
    """Run the suite in ``folder`` (its ``tests.py``) with the jsonpatch module
    beside it, recording every pair it makes a patch for; returns that
    module, the pairs (in order, repeats dropped) and a one-line summary."""
    sys.path.insert(0, str(folder))
    for name in ("jsonpatch", "jsonpatch_cli", "tests"):
        sys.modules.pop(name, None)
    import jsonpatch  # the sdist's own module, which its tests expect

    pairs: List[Pair] = []
    from_diff = jsonpatch.JsonPatch.from_diff.__func__

    def recording(cls: Any, src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        pairs.append((copy.deepcopy(src), copy.deepcopy(dst)))
        return from_diff(cls, src, dst, *args, **kwargs)

    jsonpatch.JsonPatch.from_diff = classmethod(recording)
    cwd = os.getcwd()
    try:
        os.chdir(folder)  # some tests read files beside them
        import tests  # noqa: F401  (python-json-patch's suite)

        suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules["tests"])
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    finally:
        os.chdir(cwd)
        jsonpatch.JsonPatch.from_diff = classmethod(from_diff)
    summary = "%d tests run (%d failures, %d errors, without frozenmap involved)" % (
        result.testsRun,
        len(result.failures),
        len(result.errors),
    )
    seen = set()
    unique = []
    for src, dst in pairs:
        key = repr((src, dst))
        if key not in seen:
            seen.add(key)
            unique.append((src, dst))
    return jsonpatch, unique, summary


def plain_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON data made of dicts with str keys, lists and
    scalars (what both libraries take as a document), nested at most 100
    deep (the suite's deeper ones test recursion limits, and contain
    themselves)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if depth > 100:
        return False
    if type(value) is list:
        return all(plain_json(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(type(k) is str and plain_json(v, depth + 1) for k, v in value.items())
    return False


# --- random pairs ------------------------------------------------------------------------


def random_document(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice([None, True, False, 0, 1, 2, 1.5, "", "a", "b", "x/y", "~"])
    if roll < 0.65:
        return [random_document(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    return {
        rng.choice("abcdefg"): random_document(rng, depth + 1) for _ in range(rng.randint(0, 6))
    }


def containers(doc: Any, found: List[Any]) -> List[Any]:
    if isinstance(doc, (dict, list)):
        found.append(doc)
        for value in doc.values() if isinstance(doc, dict) else doc:
            containers(value, found)
    return found


def edited(rng: random.Random, doc: Any) -> Any:
    """A copy of ``doc`` with one to four edits."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 4)):
        places = containers(doc, [])
        if not places:
            return random_document(rng)
        place = rng.choice(places)
        roll = rng.random()
        if isinstance(place, list):
            if roll < 0.25 and place:  # move an item
                place.insert(rng.randrange(len(place) + 1), place.pop(rng.randrange(len(place))))
            elif roll < 0.4 and place:
                place.pop(rng.randrange(len(place)))
            elif roll < 0.6:
                place.insert(rng.randint(0, len(place)), random_document(rng, 2))
            elif roll < 0.7:
                place.reverse()
            elif roll < 0.8 and place:
                place[rng.randrange(len(place))] = random_document(rng, 3)
            elif place:  # a subtree to another container
                moved = place.pop(rng.randrange(len(place)))
                target = rng.choice(containers(doc, []))
                if isinstance(target, list):
                    target.insert(rng.randint(0, len(target)), moved)
                else:
                    target[rng.choice("abcdefgh")] = moved
        else:
            keys = list(place)
            if roll < 0.3 and keys:  # rename a member
                place[rng.choice("abcdefghij")] = place.pop(rng.choice(keys))
            elif roll < 0.5 and keys:
                del place[rng.choice(keys)]
            elif roll < 0.7:
                place[rng.choice("abcdefghij")] = random_document(rng, 2)
            elif keys:
                moved = place.pop(rng.choice(keys))
                target = rng.choice(containers(doc, []))
                if isinstance(target, list):
                    target.insert(rng.randint(0, len(target)), moved)
                else:
                    target[rng.choice("hijk")] = moved
    return doc


def random_pairs(seed: int, count: int) -> List[Pair]:
    rng = random.Random(seed)
    pairs = []
    for k in range(count):
        a = random_document(rng)
        pairs.append((a, edited(rng, a) if k % 2 else random_document(rng)))
    return pairs


# --- comparing ---------------------------------------------------------------------------


def compare(title: str, pairs: List[Pair], theirs: Callable[[Any, Any], Any], show: int) -> bool:
    ours_total = theirs_total = compared = refused = shorter = 0
    longer = []
    wrong = []
    ours_time = theirs_time = 0.0
    for src, dst in pairs:
        start = time.perf_counter()
        try:
            their_patch = list(theirs(copy.deepcopy(src), copy.deepcopy(dst)))
        except Exception:  # e.g. a member name that is not a str: they refuse it
            refused += 1
            continue
        theirs_time += time.perf_counter() - start
        a, b = freeze(src), freeze(dst)
        start = time.perf_counter()
        patch = make_json_patch(a, b)
        ours_time += time.perf_counter() - start
        if apply_json_patch(a, patch) != b:
            wrong.append((src, dst, patch))
        compared += 1
        ours_total += len(patch)
        theirs_total += len(their_patch)
        if len(patch) > len(their_patch):
            longer.append((len(patch), len(their_patch), src, dst))
        shorter += len(patch) < len(their_patch)
    print("== %s: %d pairs compared" % (title, compared), end="")
    print(" (%d refused by jsonpatch.make_patch)" % refused if refused else "")
    print("   operations: frozenmap %d, jsonpatch %d" % (ours_total, theirs_total))
    print("   time: frozenmap %.2f s, jsonpatch %.2f s" % (ours_time, theirs_time))
    print(
        "   frozenmap's patch is shorter for %d pairs, as long for %d, longer for %d"
        % (shorter, compared - shorter - len(longer), len(longer))
    )
    for ours, their, src, dst in longer[:show]:
        print("     %d > %d: %.200s -> %.200s" % (ours, their, json.dumps(src), json.dumps(dst)))
    for src, dst, patch in wrong[:show]:
        print(
            "   DOES NOT APPLY: %.200s -> %.200s: %.300r"
            % (json.dumps(src), json.dumps(dst), patch)
        )
    return not longer and not wrong


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", help="a jsonpatch sdist (.tar.gz) or its unpacked folder")
    parser.add_argument("--no-suite", action="store_true", help="skip python-json-patch's pairs")
    parser.add_argument("--random", type=int, default=2000, help="random pairs (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="their seed (default 1)")
    parser.add_argument("--show", type=int, default=10, help="longer pairs shown (default 10)")
    args = parser.parse_args(argv)

    good = True
    with tempfile.TemporaryDirectory(prefix="jsonpatch-sdist-") as scratch:
        their_make_patch: Any = None
        if not args.no_suite:
            if args.sdist and Path(args.sdist).is_dir():
                folder = Path(args.sdist)
            elif args.sdist:
                folder = unpack(Path(args.sdist), Path(scratch))
            else:
                folder = fetch_sdist(Path(scratch))
            print("== python-json-patch:", folder.name)
            if not (folder / "tests.py").exists():
                print("   the sdist holds no tests.py: no suite pairs to compare")
            else:
                module, pairs, summary = record_pairs(folder)
                print("   its suite:", summary)
                json_pairs = [(a, b) for a, b in pairs if plain_json(a) and plain_json(b)]
                print(
                    "   %d distinct pairs given to make_patch / from_diff, %d of them JSON data"
                    " (dicts with str keys, lists, scalars)" % (len(pairs), len(json_pairs))
                )
                their_make_patch = module.make_patch
                good &= compare("its suite's pairs", json_pairs, their_make_patch, args.show)
        if args.random:
            if their_make_patch is None:
                import jsonpatch  # the installed one

                their_make_patch = jsonpatch.make_patch
            pairs = random_pairs(args.seed, args.random)
            title = "random pairs (seed %d, half of them edited copies)" % args.seed
            good &= compare(title, pairs, their_make_patch, args.show)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
