#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Rewrites the conformance section of Documentation/onnx.rst from the TAP
# log of build/selftests/vnpu_onnx_conformance (a make check or VM run):
#
#   conformance-rst.py build/results/.../onnx/conformance.log Documentation/onnx.rst
import re
import sys

BEGIN = ".. conformance-begin\n"
END = ".. conformance-end\n"


def main():
    log, rst = sys.argv[1], sys.argv[2]
    passed, failed, skipped = [], [], {}
    for line in open(log, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"ok \d+ # SKIP (test_\S+) unsupported: (.*)", line)
        if m:
            reason = re.sub(r"^node (#\d+|'[^']*') ", "", m.group(2))
            skipped.setdefault(reason, []).append(m.group(1))
            continue
        m = re.match(r"(not ok|ok) \d+ (test_\S+)(.*)", line)
        if not m:
            continue
        status, name, rest = m.groups()
        if False:
            reason = rest.split("unsupported:", 1)[-1].strip()
            reason = re.sub(r"^node (#\d+|'[^']*') ", "", reason)
            skipped.setdefault(reason, []).append(name)
        elif status == "ok":
            passed.append(name)
        else:
            failed.append((name, rest.strip()))
    total_skip = sum(len(v) for v in skipped.values())
    out = [BEGIN, "\n"]
    out.append("Totals: **%d passed**, %d failed, %d unsupported (skipped), of %d node tests.\n\n"
               % (len(passed), len(failed), total_skip, len(passed) + len(failed) + total_skip))
    out.append("Passed (%d)\n%s\n\n" % (len(passed), "-" * len("Passed (%d)" % len(passed))))
    out += ["- %s\n" % n for n in passed]
    out.append("\nFailed (%d)\n%s\n\n" % (len(failed), "-" * len("Failed (%d)" % len(failed))))
    out += ["- %s: %s\n" % (n, r) for n, r in failed] or ["None.\n"]
    title = "Unsupported (%d), by reason" % total_skip
    out.append("\n%s\n%s\n\n" % (title, "-" * len(title)))
    for reason, names in sorted(skipped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append("- %s (%d): %s\n" % (reason.replace("*", "\\*"), len(names), ", ".join(names)))
    out.append("\n" + END)
    text = open(rst, encoding="utf-8").read()
    a, b = text.index(BEGIN), text.index(END) + len(END)
    open(rst, "w", encoding="utf-8").write(text[:a] + "".join(out) + text[b:])


if __name__ == "__main__":
    main()
