"""The longest functions of the C core, and each file's size.

Method: a top-level function definition is a line that starts with its name
and an opening parenthesis (the style puts the return type on the line
above), followed by a line that is exactly ``{``; its length is the number
of lines from that ``{`` to the next line that is exactly ``}``, both
included.  File sizes are line counts.

    python scripts/c_function_lengths.py [N] [DIR]
"""

import re
import sys
from pathlib import Path


def functions(path):
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines[:-1]):
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\(", line)
        if match and lines[i + 1] == "{":
            end = lines.index("}", i + 1)
            yield match.group(1), end - i


def main():
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    src = Path(sys.argv[2] if len(sys.argv) > 2 else "frozenmap/_ccore")
    found = []
    print("file sizes (lines):")
    for path in sorted(src.glob("*.[ch]")):
        print("  %-16s %5d" % (path.name, path.read_text().count("\n")))
        if path.suffix == ".c":
            found += [(n, name, path.name) for name, n in functions(path)]
    print("the %d longest functions (lines, braces included):" % top)
    for n, name, file in sorted(found, reverse=True)[:top]:
        print("  %4d  %s  (%s)" % (n, name, file))


if __name__ == "__main__":
    main()
