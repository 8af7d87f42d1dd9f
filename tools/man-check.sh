#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Keeps the manual pages in step with what they describe.
#
#   tools/man-check.sh [--ko MODULE] [TOOL ...]
#
#   - vnpu.h and its vnpu/ headers: every declared function has a
#     kernel-doc comment whose arguments, "Return:" section and struct
#     members match the declarations (tools/gen-man3.py --check), and the
#     generated section 3 pages are one per function plus libvnpurt.3;
#   - each TOOL (a built program) has man/NAME.1, and the long options its
#     --help prints are the ones the page describes, no more, no fewer;
#   - MODULE's parameters (modinfo -F parm) are the ones man/vnpu.4
#     describes under PARAMETERS;
#   - every page formats without a groff warning.
#
# Exit status 0 when all agree; each disagreement is one line on stderr.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
header=$top/libruntime/include/vnpu.h
ko=''
tools=()
while [ $# -gt 0 ]; do
	case $1 in
	--ko) ko=${2:?--ko wants a module file} && shift ;;
	*) tools+=("$1") ;;
	esac
	shift
done

# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"
check_begin man-check

# Section 3.
python3 "$top/tools/gen-man3.py" --check "$header" || err "vnpu.h documentation is incomplete (above)"
python3 "$top/tools/gen-man3.py" --version check "$header" "$work/man3" >/dev/null ||
	err "tools/gen-man3.py failed"
if public_functions "$header" >"$work/functions"; then
	for f in $(cat "$work/functions"); do
		[ -f "$work/man3/$f.3" ] || err "no manual page for $f() (document it in vnpu.h)"
	done
	for p in "$work"/man3/*.3; do
		n=$(basename "$p" .3)
		[ "$n" = libvnpurt ] && continue
		grep -qxF "$n" "$work/functions" || err "page $n.3 describes no declared function"
	done
else
	err "cannot compile $header"
fi

# Tools: long options of --help against the page's OPTIONS section. Every
# option --help lists must be described; an option only the page describes
# must at least be one the tool accepts (a synonym, or --help itself).
for t in "${tools[@]}"; do
	name=$(basename "$t")
	page=$top/man/$name.1
	if [ ! -f "$page" ]; then
		err "$name has no manual page man/$name.1"
		continue
	fi
	timeout 10 "$t" --help >"$work/help" 2>&1 </dev/null
	if ! grep -qi usage "$work/help"; then
		err "$name --help printed no usage"
		continue
	fi
	grep -oE -- '--[a-z][a-z0-9-]*' "$work/help" | sort -u >"$work/help.opts"
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$page" | grep -oE -- '\\-\\-[a-z][a-z0-9\\-]*' |
		sed 's/\\//g' | sort -u >"$work/page.opts"
	for o in $(comm -23 "$work/help.opts" "$work/page.opts"); do
		err "$name: option $o is not described in man/$name.1"
	done
	for o in $(comm -13 "$work/help.opts" "$work/page.opts"); do
		[ "$o" = --help ] && continue
		if timeout 10 "$t" "$o=1" --help 2>&1 </dev/null | grep -q 'unrecognized option'; then
			err "$name: man/$name.1 describes $o, which $name does not accept"
		fi
	done
done
for p in "$top"/man/*.1; do
	name=$(basename "$p" .1)
	printf '%s\n' "${tools[@]}" | grep -q "/$name\$" ||
		err "man/$name.1 describes a program that is not installed (INSTALL_TOOLS)"
done

# The driver's parameters.
if [ -n "$ko" ]; then
	if [ ! -f "$ko" ]; then
		err "no module $ko"
	else
		modinfo -F parm "$ko" | sed 's/:.*//' | sort -u >"$work/ko.parms"
		sed -n '/^\.SH PARAMETERS/,/^\.SH /p' "$top/man/vnpu.4" |
			sed -nE 's/^\.BR ([a-z_0-9]+) " \(.*/\1/p' | sort -u >"$work/page.parms"
		compare_sets "$work/ko.parms" "$work/page.parms" \
			"module parameter %s is not described in man/vnpu.4" \
			"man/vnpu.4 describes parameter %s, which the module does not have"
	fi
fi

# Formatting.
for p in "$top"/man/*.[1-9] "$work"/man3/*.3; do
	out=$(sed 's/@VERSION@/0/' "$p" | LC_ALL=C.UTF-8 groff -t -man -ww -z -Tutf8 2>&1)
	[ -z "$out" ] || err "${p##*/}: groff: $out"
done

if [ "$errors" = 0 ]; then
	echo "man-check: $(ls "$work/man3" | wc -l) section 3 pages, ${#tools[@]} tool page(s)${ko:+, module parameters} in sync"
fi
[ "$errors" = 0 ]
