#!/usr/bin/env python3
"""No function body in src/ or backends/ longer than LIMIT lines (docs/CONTRIBUTING: a newcomer
reads a function whole).  A brace matcher, not a parser: a body is a brace block whose head
ends in a parameter list (or const/noexcept/override after it), outside any other function;
lambdas and blocks inside a function count as part of it.

    check_function_length.py <repository> [limit, default 80]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 80
suffixes = {".hpp", ".cpp", ".cu", ".h", ".in"}
control = re.compile(r"\b(if|for|while|switch|catch|else|do|try)\s*(\(.*\))?\s*$")
aggregate = re.compile(r"\b(class|struct|namespace|enum|union)\b[^()]*$")
signature_end = re.compile(r"\)\s*(const|override|noexcept|final|->[^{]*|\s)*$")
initializer = re.compile(r"(=|\breturn\b|\[[^\]]*\]\s*(\([^)]*\))?\s*(mutable)?)\s*$")


def code_of(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def long_functions(path):
    lines = [code_of(l) for l in path.read_text(errors="replace").splitlines()]
    open_blocks = []  # (first line, is a function body)
    in_comment = False
    for i, line in enumerate(lines):
        if in_comment:
            if "*/" in line:
                in_comment = False
            continue
        if "/*" in line and "*/" not in line:
            in_comment = True
            line = line.split("/*")[0]
        for j, ch in enumerate(line):
            if ch == "{":
                head = " ".join(l.strip() for l in lines[max(0, i - 3):i]) + " " + line[:j]
                head = head.strip()
                inside = any(fn for _, fn in open_blocks)
                is_function = (not inside and signature_end.search(head) is not None
                               and not control.search(head) and not aggregate.search(line[:j])
                               and not initializer.search(head))
                open_blocks.append((i, is_function))
            elif ch == "}" and open_blocks:
                start, is_function = open_blocks.pop()
                if is_function and i - start + 1 > limit:
                    yield start + 1, i - start + 1


found = []
for top in ("src", "backends"):
    for path in sorted((root / top).rglob("*")):
        if path.suffix in suffixes and path.is_file():
            found += [(n, f"{path.relative_to(root)}:{line}") for line, n in long_functions(path)]
for n, where in sorted(found, reverse=True):
    print(f"{where}: a function of {n} lines (at most {limit})")
sys.exit(1 if found else 0)
