#!/usr/bin/env python3
"""Checks that the layout keeps the shape docs/architecture.md describes.

- Each crate depends only on the crates its layer may import (ALLOWED below, the table of
  docs/architecture.md), dev-dependencies included.
- No crate holds more than 35 % of the project's Rust lines; no Rust file is over 1,000 lines.
- No import circle between files. Every `use` tree and inline path (`crate::`, `super::`,
  `self::`, `pfcswitch_*::`, or a name a `use` brought in) is resolved to the file that
  *defines* the item, following `pub use` re-exports, so a `mod.rs` that re-exports its
  children is a façade, not a knot. `mod x;` declarations are not edges (containment is not a
  dependency), and inline `mod tests { ... }` blocks are left out (test code is not part of the
  structure); test files of their own are in.

Usage: scripts/check-layout.py [--verbose]   (exit status 1 on any violation)
"""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_SHARE = 0.35
MAX_FILE_LINES = 1000
WARN_FILE_LINES = 800

# What each crate may depend on (its layer and those below it).
ALLOWED = {
    "pfcswitch-wire": set(),
    "pfcswitch-link": {"pfcswitch-wire"},
    "pfcswitch-switch": {"pfcswitch-wire", "pfcswitch-link"},
    "pfcswitch-hosts": {"pfcswitch-wire", "pfcswitch-link"},
    "pfcswitch-topology": {"pfcswitch-wire", "pfcswitch-link"},
    "pfcswitch-hpcc": {"pfcswitch-link"},
    "pfcswitch-sim": {"pfcswitch-wire", "pfcswitch-link", "pfcswitch-switch", "pfcswitch-hosts"},
    "pfcswitchd": {"pfcswitch-wire", "pfcswitch-link", "pfcswitch-switch", "pfcswitch-hosts"},
    "pfcswitch-lab": {
        "pfcswitch-wire", "pfcswitch-link", "pfcswitch-switch", "pfcswitch-hosts", "pfcswitch-topology", "pfcswitch-sim",
        "pfcswitchd", "pfcswitch-hpcc",
    },
    "pfcswitch": {
        "pfcswitch-wire", "pfcswitch-link", "pfcswitch-switch", "pfcswitch-hosts", "pfcswitch-topology", "pfcswitch-sim",
        "pfcswitchd", "pfcswitch-lab", "pfcswitch-hpcc",
    },
    "pfcswitch-tests": {
        "pfcswitch-wire", "pfcswitch-link", "pfcswitch-switch", "pfcswitch-hosts", "pfcswitch-topology", "pfcswitch-sim",
        "pfcswitchd", "pfcswitch-lab", "pfcswitch-hpcc",
    },
}

TOKEN = re.compile(
    r"//[^\n]*|/\*.*?\*/|r(#*)\"(?:.|\n)*?\"\1|b?\"(?:\\.|[^\"\\])*\"|b?'(?:\\.[^']*|[^\\'\n])'", re.S
)
ITEM = re.compile(r"\b(?:struct|enum|trait|fn|const|static|type|union)\s+([A-Za-z_]\w*)|macro_rules!\s*([A-Za-z_]\w*)")
MOD_DECL = re.compile(r"\bmod\s+([A-Za-z_]\w*)\s*;")
USE = re.compile(r"\buse\s+([^;]+);")
INLINE_PATH = re.compile(r"(?<![\w:])([A-Za-z_]\w*)((?:\s*::\s*[A-Za-z_]\w*)+)")


def strip(text):
    """Source without comments, string and char literals, and inline `mod name { ... }` blocks."""
    text = TOKEN.sub(lambda m: " " if m.group(0).startswith("/") else '""', text)
    out, i = [], 0
    for m in re.finditer(r"\bmod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def use_tree(tree, prefix=()):
    """Expands a use tree into (path segments, name bound) pairs; globs bind '*'."""
    tree = tree.strip()
    if tree.startswith("::"):
        tree = tree[2:]
    depth, split = 0, None
    for k, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                split = k
                break
            depth += 1
    if split is not None:
        head = [s for s in tree[:split].split("::") if s.strip()]
        body = tree[split + 1:tree.rindex("}")]
        parts, depth, start = [], 0, 0
        for k, ch in enumerate(body):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(body[start:k])
                start = k + 1
        parts.append(body[start:])
        result = []
        for part in parts:
            if part.strip():
                result += use_tree(part, prefix + tuple(s.strip() for s in head))
        return result
    alias = None
    if " as " in tree:
        tree, alias = (s.strip() for s in tree.split(" as ", 1))
    segments = prefix + tuple(s.strip() for s in tree.split("::") if s.strip())
    if segments and segments[-1] == "self":
        segments = segments[:-1]
    if not segments:
        return []
    return [(segments, alias or segments[-1])]


class Module:
    def __init__(self, crate, path, file, is_dir_owner):
        self.crate, self.path, self.file = crate, path, file
        text = strip(file.read_text())
        self.children = {}
        child_dir = file.parent if is_dir_owner else file.parent / file.stem
        for name in MOD_DECL.findall(text):
            for candidate, owner in ((child_dir / f"{name}.rs", False), (child_dir / name / "mod.rs", True)):
                if candidate.exists():
                    self.children[name] = (candidate, owner)
                    break
        self.defined = {a or b for a, b in ITEM.findall(text)}
        self.uses, self.globs = {}, []
        for tree in USE.findall(text):
            for segments, name in use_tree(re.sub(r"\bpub(\([^)]*\))?\s*", "", tree)):
                if name == "*":
                    self.globs.append(segments[:-1])
                else:
                    self.uses[name] = segments
        self.paths = [(m.group(1),) + tuple(s.strip() for s in m.group(2).split("::") if s.strip())
                      for m in INLINE_PATH.finditer(USE.sub(" ", text))]


class Project:
    def __init__(self):
        manifest = tomllib.loads((ROOT / "Cargo.toml").read_text())
        self.crates, self.modules, self.errors = {}, {}, []
        for member in manifest["workspace"]["members"]:
            package = tomllib.loads((ROOT / member / "Cargo.toml").read_text())
            name = package["package"]["name"]
            self.crates[name] = {"dir": ROOT / member, "manifest": package}
            for root in self.roots(ROOT / member, package):
                self.load(name, (root.relative_to(ROOT).as_posix(),), root, root.name in ("lib.rs", "main.rs"))
        self.idents = {name.replace("-", "_"): name for name in self.crates}

    @staticmethod
    def roots(directory, package):
        found = [p for p in (directory / "src/lib.rs", directory / "src/main.rs") if p.exists()]
        for sub in ("src/bin", "tests", "benches"):
            found += sorted((directory / sub).glob("*.rs"))
        for target in package.get("bin", []) + package.get("test", []) + package.get("bench", []):
            if "path" in target and (directory / target["path"]).resolve() not in [f.resolve() for f in found]:
                found.append(directory / target["path"])
        return found

    def load(self, crate, path, file, is_dir_owner):
        module = Module(crate, path, file, is_dir_owner)
        self.modules[(crate, path)] = module
        for name, (child, owner) in module.children.items():
            self.load(crate, path + (name,), child, owner)

    def crate_root(self, crate):
        for suffix in ("src/lib.rs", "src/main.rs"):
            path = (self.crates[crate]["dir"] / suffix).relative_to(ROOT).as_posix()
            if (crate, (path,)) in self.modules:
                return (path,)
        return None

    def resolve(self, module, segments, depth=0):
        """The module a path starting in `module` ends in: the file defining its item."""
        if depth > 12 or not segments:
            return module
        first, rest = segments[0], segments[1:]
        if first == "crate":
            root = self.crate_root(module.crate) if module.path[0].endswith("lib.rs") else module.path[:1]
            return self.walk(self.modules.get((module.crate, root)), rest, depth)
        if first == "self":
            return self.walk(module, rest, depth)
        if first == "super":
            return self.resolve(self.modules.get((module.crate, module.path[:-1]), module), ("self",) + rest, depth)
        if first in self.idents and first not in module.uses:
            root = self.crate_root(self.idents[first])
            return self.walk(self.modules.get((self.idents[first], root)) if root else None, rest, depth)
        return self.walk(module, segments, depth)

    def walk(self, module, segments, depth):
        if module is None:
            return None
        for k, segment in enumerate(segments):
            if segment in module.children:
                module = self.modules[(module.crate, module.path + (segment,))]
                continue
            if segment in module.defined:
                return module
            if segment in module.uses:
                target = module.uses[segment]
                if target[0] not in ("crate", "self", "super") and target[0] not in self.idents and target[0] not in module.children:
                    return None  # std, serde, ...
                return self.resolve(module, target + tuple(segments[k + 1:]), depth + 1)
            for glob in module.globs:
                if glob and (glob[0] in ("crate", "self", "super") or glob[0] in self.idents or glob[0] in module.children):
                    found = self.resolve(module, glob + tuple(segments[k:]), depth + 1)
                    if found is not None and found is not module:
                        return found
            return module if k > 0 or segment in module.children else None
        return module

    def edges(self):
        graph = {}
        for module in self.modules.values():
            targets = set()
            paths = list(module.uses.values()) + module.paths + module.globs
            for segments in paths:
                if segments[0] not in ("crate", "self", "super") and segments[0] not in self.idents \
                        and segments[0] not in module.uses and segments[0] not in module.children:
                    continue
                target = self.resolve(module, segments)
                if target is not None and target is not module:
                    targets.add(target.file.relative_to(ROOT).as_posix())
            graph[module.file.relative_to(ROOT).as_posix()] = targets
        return graph


def cycles(graph):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    verbose = "--verbose" in sys.argv
    project = Project()
    failures = []

    for name, crate in project.crates.items():
        manifest = crate["manifest"]
        ours = set()
        for section in ("dependencies", "dev-dependencies", "build-dependencies"):
            ours |= {dep for dep in manifest.get(section, {}) if dep in project.crates}
        if name in ALLOWED and not ours <= ALLOWED[name]:
            failures.append(f"{name} depends on {sorted(ours - ALLOWED[name])}, which its layer may not import")
        if name not in ALLOWED:
            failures.append(f"{name} is not in check-layout.py's layer table (and docs/architecture.md)")

    lines = {}
    for name, crate in project.crates.items():
        files = [p for p in crate["dir"].rglob("*.rs") if "target" not in p.parts]
        lines[name] = sum(len(p.read_text().splitlines()) for p in files)
        for path in files:
            count = len(path.read_text().splitlines())
            rel = path.relative_to(ROOT).as_posix()
            if count > MAX_FILE_LINES:
                failures.append(f"{rel} has {count} lines (at most {MAX_FILE_LINES})")
            elif count > WARN_FILE_LINES and verbose:
                print(f"note: {rel} has {count} lines")
    total = sum(lines.values())
    print(f"{'crate':<18} {'lines':>7} {'share':>6}")
    for name, count in sorted(lines.items(), key=lambda kv: -kv[1]):
        share = count / total
        print(f"{name:<18} {count:>7} {share:>6.1%}")
        if share > MAX_SHARE:
            failures.append(f"{name} holds {share:.1%} of the project's {total} Rust lines (at most {MAX_SHARE:.0%})")
    print(f"{'total':<18} {total:>7}")

    graph = project.edges()
    edges = sum(len(t) for t in graph.values())
    found = cycles(graph)
    print(f"import graph: {len(graph)} files, {edges} edges between files, {len(found)} circles")
    for component in found:
        detail = "; ".join(f"{f} -> {', '.join(sorted(t for t in graph[f] if t in component))}" for f in component)
        failures.append(f"import circle: {detail}")
    if verbose:
        for file, targets in sorted(graph.items()):
            print(f"{file}: {' '.join(sorted(targets))}")

    for failure in failures:
        print(f"check-layout: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
