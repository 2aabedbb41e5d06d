#!/usr/bin/env python3
"""The size rule of the developers' guide: no source file over 600 lines and no function over 80.

Reads every C++ source (.cpp .hpp .h .cu .cuh) of the code folders; a function is a body `{...}`
whose head ends in `)` (then const, noexcept, override, a trailing return type or a constructor's
initializer list) at namespace or class scope; its length runs from the first line of its head
to its closing brace. Lambdas and local classes count in the function that holds them.
Comments, string and character literals (raw strings too) are skipped when braces are counted.

KNOWN lists what was over the rule when the rule came in; an entry may only shrink: a listed file
or function that is now within the rule, or has grown, fails too, so the list stays true.
Usage: sizes.py [REPO_ROOT] | --self-test. Prints one line per finding, exits 1 on any.
"""
import os
import re
import sys

FOLDERS = ("core", "bench", "topology", "launch", "sweep", "ingest", "report", "monitor", "tuner", "fabric",
           "accept", "sim", "profiles", "apps")
EXTS = (".hpp", ".cpp", ".h", ".cu", ".cuh")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
# path or path:function -> lines when the rule came in (may only go down, to within the rule).
KNOWN = {}  # empty since issue 27: every file and function is within the rule

CONTROL = re.compile(r"\b(if|for|while|switch|catch|return|sizeof|decltype|alignof|noexcept)\s*$")
NAME = re.compile(r"([~A-Za-z_][A-Za-z0-9_:<>~]*(?:operator\s*[^\s(]+)?)\s*\($")


def strip(text):
    """The text with comments and literals blanked (newlines kept), so braces and lines count true."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def head_name(head):
    """The function's name when `head` (the text before a `{`) is a function's head, else None."""
    h = re.sub(r"\s+", " ", head).strip()
    h = re.sub(r"\)\s*:\s*[^;{}]*$", ")", h) if re.search(r"\)\s*:(?!:)", h) else h  # initializer list
    h = re.sub(r"\)( ?(const|noexcept(\([^)]*\))?|override|final|mutable|&|&&|-> ?[^;{}()]+))*$", ")", h)
    if not h.endswith(")"):
        return None
    depth, k = 0, len(h) - 1
    while k >= 0:
        depth += {")": 1, "(": -1}.get(h[k], 0)
        if depth == 0:
            break
        k -= 1
    before = h[:k].rstrip()
    if not before or CONTROL.search(before) or before.endswith(("=", "]", ",", "(", "return")):
        return None
    m = NAME.search(before + "(")
    return m.group(1) if m else None


def functions(text):
    """(name, first line, line count) of each function body at namespace or class scope."""
    s = strip(text)
    found, stack, last_end = [], [], 0  # stack: (kind, name, start line)
    for i, c in enumerate(s):
        if c in ";}" or (c == "{" and False):
            pass
        if c == "{":
            inside_function = any(k == "fn" for k, _, _ in stack)
            head = s[last_end:i]
            name = None if inside_function else head_name(head)
            if name:
                start = s.count("\n", 0, last_end + len(head) - len(head.lstrip())) + 1
                stack.append(("fn", name, start))
            else:
                stack.append(("scope", None, 0))
            last_end = i + 1
        elif c == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind == "fn" and not any(k == "fn" for k, _, _ in stack):
                    found.append((name, start, s.count("\n", 0, i) + 1 - start + 1))
            last_end = i + 1
        elif c == ";":
            last_end = i + 1
        elif c == ":" and s[i - 1:i + 1] != "::" and s[i:i + 2] != "::" and re.search(r"\b(public|private|protected)\s*$", s[last_end:i]):
            last_end = i + 1
    return found


def findings(root):
    out = []
    seen = set()
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if not name.endswith(EXTS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines = text.count("\n")
                out += judge(rel, lines, MAX_FILE_LINES, "file", seen)
                for fn, start, n in functions(text):
                    out += judge(f"{rel}:{fn}", n, MAX_FUNCTION_LINES, f"function (line {start})", seen)
    out += [f"{key}: listed in KNOWN but not found (take it out)" for key in KNOWN if key not in seen]
    return out


def judge(key, lines, limit, what, seen):
    seen.add(key)
    known = KNOWN.get(key)
    if known is None:
        return [f"{key}: {what} of {lines} lines, over {limit}"] if lines > limit else []
    if lines <= limit:
        return [f"{key}: {what} of {lines} lines is within the rule now: take it out of KNOWN"]
    if lines > known:
        return [f"{key}: {what} of {lines} lines, over {limit} and grown from {known}"]
    if lines < known:
        return [f"{key}: {what} of {lines} lines: lower KNOWN from {known}"]
    return []


def self_test():
    text = ('namespace a {\nint f(int x) {\n  auto g = [](int y) { return y; };\n  if (x) {\n    return g(x);\n  }\n'
            '  return 0;\n}\nstruct S {\n  S() : v{1} {}\n  int h() const noexcept { return v; }\n  int v;\n};\n'
            'const char* t = R"({ " })";\n}\n')
    got = [(n, s, c) for n, s, c in functions(text)]
    want = [("f", 2, 7), ("S", 10, 1), ("h", 11, 1)]
    ok = got == want
    print("ok: self-test" if ok else f"FAIL: self-test found {got}, want {want}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    bad = findings(root)
    for line in bad:
        print(line)
    if bad:
        print(f"FAIL: {len(bad)} finding(s) of the size rule (files <= {MAX_FILE_LINES} lines, functions <= "
              f"{MAX_FUNCTION_LINES})")
        return 1
    print(f"ok: every file within {MAX_FILE_LINES} lines and every function within {MAX_FUNCTION_LINES}, "
          f"{len(KNOWN)} known exceptions unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
