#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Section 3 manual pages from the kernel-doc comments of a C header.

    gen-man3.py [--version V] [--date YYYY-MM-DD] HEADER OUTDIR
    gen-man3.py --check HEADER

HEADER is read with the headers it includes with quotes from its own folder
(vnpu.h's vnpu/*.h), in include order.

Writes one page per documented function (OUTDIR/NAME.3) and an overview page
(OUTDIR/libvnpurt.3) with the header's introduction, every function, every
documented struct and enum, and the DOC: sections. A page for a function that
takes or returns a documented struct or enum also shows that type.

The comments use the kernel-doc style of the kernel's own headers:

    /**
     * vnpu_init() - start the runtime and find the vnpu devices
     * @flags: reserved, must be 0
     *
     * Free text; paragraphs are separated by blank lines, "- " starts a
     * list item. @flags, func(), %CONSTANT, &struct name and ``code``
     * are marked up.
     *
     * Return: VNPU_SUCCESS, or ...
     */
    int vnpu_init(unsigned int flags);

    /** vnpu_status_name() - a one-line comment works too */

    /**
     * struct name - summary
     * @member: description of each member
     */

--check reports, without writing anything, every way the documentation and
the declarations disagree: a function declared without a comment, a comment
naming another function than the declaration after it, an argument without
@description or an @description without argument, a non-void function
without "Return:", a struct member without @description. Exit status 1 then.

The date of the pages is SOURCE_DATE_EPOCH when set (package builds), else
the newest modification time of HEADER and its headers, so that the output
is reproducible.
"""

import argparse
import datetime
import os
import re
import sys

LIBRARY = "libvnpurt"
HEADER_NAME = "vnpu.h"
MANUAL = "vnpu runtime"


class Doc:
    def __init__(self, kind, name, summary, params, sections, decl, line, path):
        self.kind = kind  # "function", "struct", "enum", "doc"
        self.name = name
        self.summary = summary
        self.params = params  # [(name, text)]
        self.sections = sections  # [(title or None, [paragraph lines])]
        self.decl = decl  # the declaration text after the comment
        self.line = line
        self.path = path  # the header the comment is in


def strip_comment(body):
    lines = []
    for raw in body.split("\n"):
        s = raw.strip()
        if s.startswith("*"):
            s = s[1:]
            if s.startswith(" "):
                s = s[1:]
        lines.append(s.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


HEAD_RE = re.compile(
    r"^(?:(?P<func>\w+)\(\)|(?P<tkind>struct|enum|union)\s+(?P<tname>\w+)|DOC:\s*(?P<doc>.*?))"
    r"\s*(?:-\s*(?P<summary>.*))?$")
PARAM_RE = re.compile(r"^@(\w+|\.\.\.):\s*(.*)$")
SECTION_RE = re.compile(r"^(Return|Returns|Context|Note|Notes|Example|Errors):\s*(.*)$")


def parse_comment(lines):
    """Split comment lines into head, params and sections."""
    if not lines:
        return None
    m = HEAD_RE.match(lines[0])
    if not m:
        # A note above the "name() - summary" line: start at that line.
        for k, ln in enumerate(lines[1:], 1):
            if re.match(r"^\w+\(\)\s+-\s", ln):
                return parse_comment(lines[k:])
        return None
    i = 1
    summary = (m.group("summary") or "").strip()
    if m.group("doc") is not None:
        kind, name, summary = "doc", m.group("doc").strip(), ""
    elif m.group("func"):
        kind, name = "function", m.group("func")
    else:
        kind, name = m.group("tkind"), m.group("tname")
    # A summary may wrap onto following lines.
    while i < len(lines) and lines[i].strip() and not lines[i].startswith("@") \
            and kind != "doc":
        summary += " " + lines[i].strip()
        i += 1
    params = []
    while i < len(lines):
        pm = PARAM_RE.match(lines[i])
        if pm:
            params.append([pm.group(1), pm.group(2).strip()])
        elif lines[i].strip() and params and not lines[i].startswith("@"):
            params[-1][1] += " " + lines[i].strip()
        elif not lines[i].strip() and params:
            # A blank line ends the parameter block.
            i += 1
            break
        elif lines[i].strip():
            break
        i += 1
    sections = []
    title, para = None, []
    cur = []  # paragraphs of the current section
    for line in lines[i:] + [""]:
        sm = SECTION_RE.match(line)
        if sm:
            if para:
                cur.append(para)
            if cur or title:
                sections.append((title, cur))
            title, cur, para = sm.group(1), [], []
            if sm.group(2):
                para = [sm.group(2)]
            continue
        if not line.strip():
            if para:
                cur.append(para)
            para = []
        else:
            para.append(line)
    if para:
        cur.append(para)
    if cur or title:
        sections.append((title, cur))
    return kind, name, summary.rstrip("."), [tuple(p) for p in params], sections


def declaration_after(text, pos):
    """The declaration that starts at pos: up to ';' at brace depth 0."""
    depth, j = 0, pos
    while j < len(text):
        c = text[j]
        if text.startswith("/*", j):
            k = text.find("*/", j)
            j = k + 2 if k >= 0 else len(text)
            continue
        if text.startswith("//", j):
            k = text.find("\n", j)
            j = k if k >= 0 else len(text)
            continue
        if c == "#" and (j == 0 or text[j - 1] == "\n"):
            k = text.find("\n", j)
            j = k if k >= 0 else len(text)
            if depth == 0 and not text[pos:j].strip().startswith("#"):
                pass
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == ";" and depth == 0:
            return text[pos:j + 1].strip()
        j += 1
    return text[pos:].strip()


def strip_code_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: " " * 0 + "\n" * m.group(0).count("\n"), text,
                  flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def included_headers(path, seen=None):
    """@path, then every header it includes with quotes that exists next to
    it (vnpu.h's vnpu/*.h), depth first, each once, in include order."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    files = [path]
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
        sub = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
        if os.path.isfile(sub):
            files += included_headers(sub, seen)
    return files


def parse_header(path):
    """The header @path with the headers it includes: (text, docs, intro),
    the introduction being @path's own."""
    texts, docs = [], []
    for f in included_headers(path):
        text, fdocs, fintro = parse_file(f)
        if f == path:
            intro = fintro
        texts.append(text)
        docs += fdocs
    return "\n".join(texts), docs, intro


def parse_file(path):
    text = open(path, encoding="utf-8").read()
    docs = []
    for m in re.finditer(r"/\*\*(?!\*)(.*?)\*/", text, flags=re.S):
        lines = strip_comment(m.group(1))
        parsed = parse_comment(lines)
        line = text.count("\n", 0, m.start()) + 1
        if not parsed:
            continue
        kind, name, summary, params, sections = parsed
        decl = ""
        if kind != "doc":
            # Skip blank lines and preprocessor lines up to the declaration.
            rest = text[m.end():]
            off = m.end()
            while True:
                stripped = rest.lstrip()
                off += len(rest) - len(stripped)
                rest = stripped
                if rest.startswith("#"):
                    nl = rest.find("\n")
                    off += nl
                    rest = rest[nl:]
                    continue
                break
            decl = declaration_after(text, off)
        docs.append(Doc(kind, name, summary, params, sections, decl, line, path))
    # The introduction: the first plain comment with more than the licence.
    intro = []
    for first in re.finditer(r"/\*(?!\*)(.*?)\*/", text, flags=re.S):
        intro = [ln for ln in strip_comment(first.group(1))
                 if "SPDX-License-Identifier" not in ln and not ln.startswith("Copyright")]
        if any(ln.strip() for ln in intro):
            break
    while intro and not intro[0].strip():
        intro.pop(0)
    return text, docs, intro


def declared_functions(text):
    """Names of the functions the header declares at file scope."""
    code = strip_code_comments(text)
    code = "\n".join(ln for ln in code.split("\n") if not ln.lstrip().startswith("#"))
    # The C++ linkage block is file scope too.
    code = re.sub(r'extern\s+"C"\s*\{', "", code)
    names, depth, stmt = [], 0, ""
    for c in code:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                stmt = ""
            continue
        if depth:
            continue
        if c == ";":
            s = " ".join(stmt.split())
            m = re.match(r"^(?:extern\s+)?[\w\s\*]*?\b(\w+)\s*\(", s)
            if m and not s.startswith(("typedef", "static")) and \
                    not re.match(r"^[\w\s\*]*\(\s*\*", s):
                names.append(m.group(1))
            stmt = ""
        else:
            stmt += c
    return names


# --- declarations -----------------------------------------------------------


def split_prototype(decl):
    """(return type, name, [(type, argname)]) of a function declaration."""
    s = " ".join(decl.rstrip(";").split())
    m = re.match(r"^(.*?)\b(\w+)\s*\((.*)\)\s*(?:__attribute__.*)?$", s)
    if not m:
        return None
    ret, name, args = m.group(1).strip(), m.group(2), m.group(3).strip()
    out = []
    if args and args != "void":
        for a in split_args(args):
            a = a.strip()
            if a == "...":
                out.append(("...", "..."))
                continue
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", a)
            if fp:
                out.append((a, fp.group(1)))
                continue
            am = re.match(r"^(.*?)(\w+)\s*(\[[^\]]*\])?$", a)
            if not am or not am.group(1).strip() or am.group(1).strip() in (
                    "struct", "enum", "union"):
                out.append((a, ""))
            else:
                out.append((am.group(1).strip() + (am.group(3) or ""), am.group(2)))
    return ret, name, out


def split_args(args):
    """Split an argument list at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for c in args:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return parts


def struct_members(decl):
    """Member names of a struct/union declaration (top level only)."""
    body = decl[decl.find("{") + 1:decl.rfind("}")]
    body = strip_code_comments(body)
    names, depth, stmt = [], 0, ""
    for c in body:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == ";" and depth == 0:
            # "uint32_t m, n, k": one name per declarator.
            for part in split_args(stmt):
                m = re.search(r"(\w+)\s*(\[[^\]]*\])*\s*(:\s*\d+)?\s*$", part)
                if m:
                    names.append(m.group(1))
            stmt = ""
            continue
        if depth == 0 or c not in "{}":
            stmt += c
    return names


# --- roff -------------------------------------------------------------------


def esc(s):
    s = s.replace("\\", "\\e")
    # groff reads ASCII: other characters as their named Unicode escape.
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in s)


def line_safe(s):
    if s.startswith((".", "'")):
        return "\\&" + s
    return s


def inline(s, known):
    s = esc(s)
    s = re.sub(r"``(.+?)``", lambda m: "\\fB" + m.group(1) + "\\fP", s)
    s = re.sub(r"&((?:struct|enum|union)\s+\w+)", r"\\fI\1\\fP", s)
    s = re.sub(r"(?<![\w%])%(\w+)", r"\\fB\1\\fP", s)
    s = re.sub(r"(?<![\w@])@(\w+)", r"\\fI\1\\fP", s)

    def fn(m):
        name = m.group(1)
        return "\\fB" + name + "\\fP()"
    s = re.sub(r"(?<![\w\\])(\w+)\(\)", fn, s)
    # Status codes and other constants of the API read as code.
    s = re.sub(r"(?<![\w\\])(VNPU_[A-Z0-9_]+)\b", r"\\fB\1\\fP", s)
    # Never hyphenate an identifier.
    s = re.sub(r"(?<![\w\\])(?=\w*_\w)", r"\\%", s)
    return s


def plain(s):
    """Text without kernel-doc markup, for the NAME line."""
    s = re.sub(r"``(.+?)``", r"\1", s)
    s = re.sub(r"(?<![\w%@])[%@&](\w)", r"\1", s)
    return esc(s)


def paragraphs_to_roff(paras, known):
    out = []
    for para in paras:
        items, text = [], []
        for ln in para:
            if ln.startswith("- "):
                if text:
                    out += [".PP", line_safe(inline(" ".join(text), known))]
                    text = []
                items.append(ln[2:].strip())
            elif items and ln.startswith("  "):
                items[-1] += " " + ln.strip()
            else:
                if items:
                    for it in items:
                        out += [".IP \\(bu 2", line_safe(inline(it, known))]
                    items = []
                text.append(ln.strip())
        if text:
            out += [".PP", line_safe(inline(" ".join(text), known))]
        for it in items:
            out += [".IP \\(bu 2", line_safe(inline(it, known))]
    return out


def prototype_roff(decl, params):
    proto = split_prototype(decl)
    if not proto:
        return [".B " + esc(" ".join(decl.split()))]
    ret, name, args = proto
    head = ret + ("" if ret.endswith("*") else " ") + name + "("
    parts = []
    for t, n in args:
        if t == "...":
            parts.append("...")
        elif n and t.endswith(")"):
            # A function pointer: the name sits inside the type.
            parts.append(esc(t).replace("*" + n + ")", "*\\fI" + n + "\\fB)", 1))
        elif n:
            parts.append(esc(t) + ("" if t.endswith("*") else " ") + "\\fI" + n + "\\fB")
        else:
            parts.append(esc(t))
    if not parts:
        parts = ["void"]
    one = "\\fB" + esc(head) + ", ".join(parts) + ");\\fP"
    plain_len = len(head) + sum(len(re.sub(r"\\f.", "", p)) + 2 for p in parts)
    if plain_len <= 72:
        return [one]
    lines = []
    indent = " " * len(head)
    for i, p in enumerate(parts):
        prefix = esc(head) if i == 0 else indent
        suffix = ");" if i == len(parts) - 1 else ","
        lines.append("\\fB" + prefix + p + suffix + "\\fP")
    return lines


def type_block(doc, known):
    out = [".PP", ".in +4n", ".EX"]
    for ln in doc.decl.split("\n"):
        out.append(line_safe(esc(ln.replace("\t", "    "))))
    out += [".EE", ".in"]
    if doc.params:
        for n, t in doc.params:
            out += [".TP", ".I " + n, line_safe(inline(t, known))]
    for title, paras in doc.sections:
        if title:
            out += [".PP", "\\fI" + title + ":\\fP"]
        out += paragraphs_to_roff(paras, known)
    return out


def th(name, section, date, version):
    return '.TH %s %s %s "vnpu %s" "%s"' % (name, section, date, version, MANUAL)


def see_also(refs):
    out = [".SH SEE ALSO"]
    for i, (n, s) in enumerate(refs):
        out.append(".BR %s (%s)%s" % (esc(n).replace("-", "\\-"), s,
                                      "," if i < len(refs) - 1 else ""))
    return out


def mentioned_functions(doc, functions):
    text = " ".join([doc.summary] + [t for _, t in doc.params] +
                    [" ".join(ln for p in paras for ln in p) for _, paras in doc.sections])
    found = set(re.findall(r"\b(\w+)\(\)", text)) & set(functions)
    found.discard(doc.name)
    return sorted(found)


def header_lines(version, date, name, section, source):
    return [
        '.\\" Generated by tools/gen-man3.py from %s; do not edit.' % source,
        th(name, section, date, version),
    ]


def function_page(doc, types, functions, version, date):
    out = header_lines(version, date, doc.name, "3", HEADER_NAME)
    out += [".SH NAME", "%s \\- %s" % (doc.name, plain(doc.summary))]
    out += [".SH LIBRARY", "vnpu runtime library",
            ".RI ( %s ,\\ \\-lvnpurt )" % LIBRARY]
    out += [".SH SYNOPSIS", ".nf", ".B #include <%s>" % HEADER_NAME, ".PP"]
    out += prototype_roff(doc.decl, doc.params)
    out += [".fi"]
    out += [".SH DESCRIPTION"]
    desc = [(t, p) for t, p in doc.sections if t is None or t not in ("Return", "Returns")]
    ret = [(t, p) for t, p in doc.sections if t in ("Return", "Returns")]
    body = []
    for title, paras in desc:
        if title:
            body += [".SS " + title]
        body += paragraphs_to_roff(paras, functions)
    s = doc.summary[:1].upper() + doc.summary[1:]
    out += [".PP", line_safe(inline("%s() - %s." % (doc.name, s), functions)
                             .replace("\\fP() - ", "\\fP() \\- ", 1))]
    if doc.params:
        out += [".PP", "Arguments:"]
        for n, t in doc.params:
            out += [".TP", ".I " + n, line_safe(inline(t, functions))]
    out += body
    used = []
    for tname in re.findall(r"\b((?:struct|enum|union)\s+\w+)", doc.decl):
        key = " ".join(tname.split())
        if key in types and key not in used:
            used.append(key)
    for key in used:
        t = types[key]
        out += [".SS " + key, ".PP", line_safe(inline(t.summary[:1].upper() + t.summary[1:] + ".",
                                                      functions))]
        out += type_block(t, functions)
    if ret:
        out += [".SH RETURN VALUE"]
        for _, paras in ret:
            out += paragraphs_to_roff(paras, functions)
    refs = [(LIBRARY, "3")] + [(f, "3") for f in mentioned_functions(doc, functions)]
    if "vnpu_status_string" not in [r[0] for r in refs] and doc.name != "vnpu_status_string" \
            and "vnpu_status_string" in functions and ret:
        refs.append(("vnpu_status_string", "3"))
    out += see_also(refs)
    return "\n".join(out) + "\n"


def overview_page(docs, intro, version, date):
    functions = [d.name for d in docs if d.kind == "function"]
    out = header_lines(version, date, LIBRARY, "3", HEADER_NAME)
    out += [".SH NAME", "%s \\- runtime library of the vnpu virtual NPU" % LIBRARY]
    out += [".SH SYNOPSIS", ".nf", ".B #include <%s>" % HEADER_NAME, ".PP",
            ".B cc prog.c $(pkg\\-config \\-\\-cflags \\-\\-libs vnpurt)", ".fi"]
    out += [".SH DESCRIPTION"]
    paras, para = [], []
    for ln in intro:
        if ln.strip():
            para.append(ln)
        elif para:
            paras.append(para)
            para = []
    if para:
        paras.append(para)
    out += paragraphs_to_roff(paras, functions)
    out += [".PP",
            "Each function has its own manual page. The library exports only these "
            "functions, each with a symbol version (VNPU_\\fImajor\\fP.\\fIminor\\fP, "
            "the API level that added it); a program linked against "
            "libvnpurt.so.1 keeps working with every later release of the same soname."]
    for d in docs:
        if d.kind == "doc":
            out += [".SH " + esc(d.name.upper())]
            for title, ps in d.sections:
                out += paragraphs_to_roff(ps, functions)
    out += [".SH FUNCTIONS"]
    for d in sorted((d for d in docs if d.kind == "function"), key=lambda d: d.name):
        out += [".TP", ".BR %s (3)" % d.name, line_safe(inline(d.summary, functions))]
    types = [d for d in docs if d.kind in ("struct", "enum", "union")]
    if types:
        out += [".SH TYPES"]
        for t in types:
            out += [".SS %s %s" % (t.kind, t.name), ".PP",
                    line_safe(inline(t.summary[:1].upper() + t.summary[1:] + ".", functions))]
            out += type_block(t, functions)
    out += see_also([("vnpu-smi", "1"), ("vnpu", "4")] +
                    [(f, "3") for f in sorted(functions)])
    return "\n".join(out) + "\n"


def check(path):
    text, docs, _ = parse_header(path)
    errors = []
    documented = {}
    for d in docs:
        where = "%s:%d" % (d.path, d.line)
        if d.kind == "function":
            proto = split_prototype(d.decl)
            if not proto:
                errors.append("%s: %s(): no function declaration follows the comment" %
                              (where, d.name))
                continue
            ret, name, args = proto
            if name != d.name:
                errors.append("%s: comment is for %s() but declares %s()" % (where, d.name, name))
                continue
            documented[name] = d
            if not d.summary:
                errors.append("%s: %s(): no summary after ' - '" % (where, name))
            argnames = [n for _, n in args]
            for i, (t, n) in enumerate(args):
                if not n and t != "...":
                    errors.append("%s: %s(): argument %d (%s) has no name" % (where, name, i + 1, t))
            # A one-line comment (summary only) may describe its arguments
            # and result in the summary itself.
            if not d.params and not d.sections:
                continue
            docnames = [n for n, _ in d.params]
            for n in argnames:
                if n and n != "..." and n not in docnames:
                    errors.append("%s: %s(): argument %s is not described (@%s:)" %
                                  (where, name, n, n))
            for n in docnames:
                if n not in argnames:
                    errors.append("%s: %s(): @%s describes no argument" % (where, name, n))
            is_void = re.sub(r"\s+", " ", ret).strip() == "void"
            if not is_void and not any(t in ("Return", "Returns") for t, _ in d.sections):
                errors.append("%s: %s(): no 'Return:' section" % (where, name))
        elif d.kind in ("struct", "union", "enum"):
            if not re.match(r"^(typedef\s+)?%s\s+%s\b" % (d.kind, d.name), d.decl):
                errors.append("%s: comment is for %s %s but the declaration after it is '%s'" %
                              (where, d.kind, d.name, d.decl.split("\n")[0]))
                continue
            if d.kind != "enum" and "{" in d.decl:
                members = struct_members(d.decl)
                docnames = [n for n, _ in d.params]
                for n in members:
                    if n not in docnames:
                        errors.append("%s: %s %s: member %s is not described (@%s:)" %
                                      (where, d.kind, d.name, n, n))
                for n in docnames:
                    if n not in members:
                        errors.append("%s: %s %s: @%s describes no member" %
                                      (where, d.kind, d.name, n))
    for name in declared_functions(text):
        if name not in documented:
            errors.append("%s: %s() is declared without a kernel-doc comment (/** %s() - ... */)" %
                          (path, name, name))
    for e in errors:
        print("gen-man3: " + e, file=sys.stderr)
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--version", default="")
    ap.add_argument("--date")
    ap.add_argument("header")
    ap.add_argument("outdir", nargs="?")
    a = ap.parse_args()
    if a.check:
        return check(a.header)
    if not a.outdir:
        ap.error("OUTDIR is required")
    if a.date:
        date = a.date
    else:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        ts = int(epoch) if epoch else int(max(os.stat(f).st_mtime
                                              for f in included_headers(a.header)))
        date = datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%d")
    text, docs, intro = parse_header(a.header)
    types = {"%s %s" % (d.kind, d.name): d for d in docs if d.kind in ("struct", "enum", "union")}
    functions = [d.name for d in docs if d.kind == "function"]
    os.makedirs(a.outdir, exist_ok=True)
    written = 0
    for d in docs:
        if d.kind != "function" or not split_prototype(d.decl):
            continue
        with open(os.path.join(a.outdir, d.name + ".3"), "w", encoding="utf-8") as f:
            f.write(function_page(d, types, functions, a.version, date))
        written += 1
    with open(os.path.join(a.outdir, LIBRARY + ".3"), "w", encoding="utf-8") as f:
        f.write(overview_page(docs, intro, a.version, date))
    print("gen-man3: %d pages in %s" % (written + 1, a.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
