#!/usr/bin/env python3
"""Checks the include rules of docs/architecture.md's folder table against src/.

Each row names its folders (`src/X/`) and, in its last column, what they may include: folder
names, "SimGrid", "everything" or "the standard library"; parenthesised notes are comments.
A file of src/X may include "X/..." and whatever its row lists; SimGrid (simgrid/, xbt/)
only where the row says SimGrid. Prints every violation (file:line: include) and exits 1;
exits 1 too when a folder of src/ has no row, so a new folder must state its rule.

usage: tests/check_include_rules.py [SOURCE_DIR]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
table = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()

rules = {}  # folder -> set of allowed folders, or None for everything
for line in table.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 3 or not cells[0].startswith("`src/"):
        continue
    folders = re.findall(r"`src/([a-z_]+)/`", cells[0])
    allowed_text = re.sub(r"\([^)]*\)", "", cells[-1])
    words = [w.strip() for w in allowed_text.split(",") if w.strip()]
    allowed = None if "everything" in words else {w for w in words if w != "the standard library"}
    for f in folders:
        rules[f] = allowed

include = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
problems = []
src = os.path.join(root, "src")
for folder in sorted(os.listdir(src)):
    if not os.path.isdir(os.path.join(src, folder)):
        continue
    if folder not in rules:
        problems.append(f"src/{folder}/: no row in docs/architecture.md's folder table")
        continue
    allowed = rules[folder]
    for dirpath, _, names in os.walk(os.path.join(src, folder)):
        for name in sorted(names):
            if not name.endswith((".cc", ".h")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                for number, text in enumerate(f, 1):
                    m = include.match(text)
                    if not m or allowed is None:
                        continue
                    target = m.group(1)
                    head = target.split("/")[0] if "/" in target else ""
                    if head in ("simgrid", "xbt") or target.startswith("simgrid"):
                        ok = "SimGrid" in allowed
                    elif head and os.path.isdir(os.path.join(src, head)):
                        ok = head == folder or head in allowed
                    else:
                        ok = True  # a system or third-party header
                    if not ok:
                        problems.append(f"{rel}:{number}: {target} "
                                        f"(src/{folder}/ may include: "
                                        f"{', '.join(sorted(allowed)) or 'nothing of src/'})")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
