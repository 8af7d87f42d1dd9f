#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# ABI discipline for libvnpurt.
#
#   tools/abi-check.sh map            vnpu.h and libvnpurt.map agree (run
#                                     before the library is linked)
#   tools/abi-check.sh check LIB      everything below, against a built LIB
#   tools/abi-check.sh update-map     add the functions vnpu.h declares and
#                                     the map lacks to the node of the
#                                     current API level (creating the node,
#                                     its debian/libvnpurt1.symbols line and
#                                     a debian/changelog entry if needed)
#   tools/abi-check.sh update-list LIB  rewrite the committed symbol list
#                                     from LIB; refuses to drop a symbol
#
# `make abi-update` runs update-map, relinks and runs update-list; `make
# abi-check` runs check. What check compares:
#
#   - the dynamic symbols LIB exports (name, type, version node) with the
#     committed list libruntime/abi/libvnpurt.symbols, and LIB's soname with
#     the list's: a symbol that disappears or changes node is an ABI break;
#   - the functions vnpu.h declares with the ones LIB exports: the library
#     exports exactly the public API;
#   - every node of the map with a "(symver)NODE" line of
#     debian/libvnpurt1.symbols, and the API level of vnpu.h
#     (VNPU_VERSION_MAJOR.MINOR) with the version in debian/changelog.
#
# The node of API level X.Y is VNPU_X.Y. Exit status 0 when all agree.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
header=${VNPU_ABI_HEADER:-$top/libruntime/include/vnpu.h}
map=${VNPU_ABI_MAP:-$top/libruntime/libvnpurt.map}
list=${VNPU_ABI_LIST:-$top/libruntime/abi/libvnpurt.symbols}
debsyms=${VNPU_ABI_DEBSYMS:-$top/debian/libvnpurt1.symbols}
changelog=${VNPU_ABI_CHANGELOG:-$top/debian/changelog}
CC=${CC:-gcc}

# shellcheck source=tools/check-lib.sh
. "$top/tools/check-lib.sh"
check_begin abi-check
die() {
	echo "abi-check: $*" >&2
	exit 2
}

# Functions vnpu.h (and the vnpu/ headers it includes) declares, one name
# a line, sorted.
header_functions() {
	local out
	out=$(public_functions "$header") || die "cannot compile $header"
	[ -n "$out" ] || die "no function found in ${header##*/}"
	echo "$out"
}

# "NODE symbol" for every global symbol of the map, in file order.
map_symbols() {
	awk '
		{ sub(/\/\*.*\*\//, "") }
		/\/\*/ { incomment = 1 }
		incomment { if (/\*\//) incomment = 0; next }
		/^[[:space:]]*[A-Za-z_][A-Za-z0-9_.]*[[:space:]]*\{/ {
			node = $1; sub(/\{.*/, "", node); global = 0; next
		}
		/global:/ { global = 1; next }
		/local:/ { global = 0; next }
		/^[[:space:]]*\}/ { node = ""; next }
		node != "" && global {
			for (i = 1; i <= NF; i++) {
				s = $i; sub(/;.*/, "", s)
				if (s != "") print node, s
			}
		}' "$map"
}

# Node names of the map, in file order.
map_nodes() {
	sed -E 's#/\*.*\*/##' "$map" |
		sed -nE 's/^[[:space:]]*([A-Za-z_][A-Za-z0-9_.]*)[[:space:]]*\{.*/\1/p'
}

# "NODE TYPE symbol" for every symbol LIB defines and exports, sorted.
lib_exports() {
	readelf --dyn-syms -W "$1" | awk '
		$1 ~ /^[0-9]+:$/ && $7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") {
			name = $8; node = "-"
			if (name == "") next
			# The definition of a version node itself (ABS, no @).
			if ($7 == "ABS" && index(name, "@") == 0) next
			if (i = index(name, "@@")) { node = substr(name, i + 2); name = substr(name, 1, i - 1) }
			else if (i = index(name, "@")) { node = substr(name, i + 1); name = substr(name, 1, i - 1) }
			print node, $4, name
		}' | sort -k3
}

lib_soname() {
	readelf -d "$1" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p'
}

api_level() {
	local major minor
	major=$(sed -nE 's/^#define[[:space:]]+VNPU_VERSION_MAJOR[[:space:]]+([0-9]+).*/\1/p' "$header")
	minor=$(sed -nE 's/^#define[[:space:]]+VNPU_VERSION_MINOR[[:space:]]+([0-9]+).*/\1/p' "$header")
	[ -n "$major" ] && [ -n "$minor" ] || die "no VNPU_VERSION_MAJOR/MINOR in $header"
	echo "$major.$minor"
}

changelog_version() {
	sed -nE '1s/^[^ ]+ \(([^)]+)\).*/\1/p' "$changelog"
}

check_map() {
	header_functions >"$work/decl"
	map_symbols >"$work/map"
	awk '{ print $2 }' "$work/map" | sort >"$work/mapsyms"
	local s
	compare_sets "$work/decl" "$work/mapsyms" \
		"vnpu.h declares %s() but libvnpurt.map does not export it: run 'make abi-update'" \
		"libvnpurt.map exports %s, which vnpu.h does not declare"
	for s in $(awk '{ print $2 }' "$work/map" | sort | uniq -d); do
		err "libvnpurt.map lists $s more than once"
	done
	local level node
	level=$(api_level)
	while read -r node; do
		if [[ ! $node =~ ^VNPU_([0-9]+)\.([0-9]+)$ ]]; then
			err "map node $node is not named VNPU_MAJOR.MINOR"
		elif [ "$(printf '%s\n%s\n' "${node#VNPU_}" "$level" | sort -V | tail -n1)" != "$level" ]; then
			err "map node $node is newer than the API level $level of vnpu.h"
		fi
	done < <(map_nodes)
}

check_packaging_metadata() {
	local level node ver
	level=$(api_level)
	if [ -f "$debsyms" ]; then
		while read -r node; do
			if ! grep -qE "^ \(symver\)$node [0-9]" "$debsyms"; then
				err "debian/libvnpurt1.symbols lacks the line ' (symver)$node ${node#VNPU_}.0' (make abi-update)"
			fi
		done < <(map_nodes)
		while read -r node; do
			map_nodes | grep -qxF "$node" ||
				err "debian/libvnpurt1.symbols names $node, which the map does not have"
		done < <(sed -nE 's/^ \(symver\)([^ ]+) .*/\1/p' "$debsyms")
	fi
	if [ -f "$changelog" ]; then
		ver=$(changelog_version)
		case $ver in
		"$level".*) ;;
		*) err "debian/changelog is at $ver but vnpu.h is at API level $level: run 'make abi-update'" ;;
		esac
	fi
}

# Load the committed list: SONAME into $want_soname, symbols into $work/list.
load_list() {
	[ -f "$list" ] || die "no committed symbol list $list: run 'make abi-update'"
	want_soname=$(awk '$1 == "SONAME" { print $2 }' "$list")
	grep -vE '^(#|SONAME |$)' "$list" | sort -k3 >"$work/list"
}

check_lib() {
	local lib=$1 s
	[ -f "$lib" ] || die "no library $lib (build it with 'make runtime')"
	load_list
	lib_exports "$lib" >"$work/exports"
	local soname
	soname=$(lib_soname "$lib")
	[ "$soname" = "$want_soname" ] ||
		err "soname is $soname, the committed list says $want_soname"

	while read -r node type s; do
		if grep -qE " $s\$" "$work/exports"; then
			err "ABI break: $s changed from '$node $type' to '$(grep -E " $s\$" "$work/exports" | head -n1 | cut -d' ' -f1,2)'"
		else
			err "ABI break: $s ($node) is no longer exported"
		fi
	done < <(comm -23 <(sort "$work/list") <(sort "$work/exports") | sort -k3)
	while read -r node type s; do
		grep -qE " $s\$" "$work/list" && continue
		if [ "$node" = - ]; then
			err "$s is exported without a version node (is the map linked?)"
		else
			err "new export $s ($node) is not in the committed list: run 'make abi-update' and commit libruntime/abi/"
		fi
	done < <(comm -13 <(sort "$work/list") <(sort "$work/exports"))

	header_functions >"$work/decl"
	awk '{ print $3 }' "$work/exports" | sort -u >"$work/names"
	compare_sets "$work/decl" "$work/names" \
		"vnpu.h declares %s() but the library does not export it" \
		"%s is exported but is not public API (not declared in vnpu.h)"
}

# Add header functions missing from the map to node VNPU_<level>.
update_map() {
	local level node missing
	level=$(api_level)
	node=VNPU_$level
	header_functions >"$work/decl"
	map_symbols | awk '{ print $2 }' | sort >"$work/mapsyms"
	missing=$(comm -23 "$work/decl" "$work/mapsyms")

	if [ -n "$missing" ]; then
		if ! map_nodes | grep -qxF "$node"; then
			local prev
			prev=$(map_nodes | tail -n1)
			{
				printf '\n%s {\n\tglobal:\n' "$node"
				printf '\t\t%s;\n' $missing
				if [ -n "$prev" ]; then printf '} %s;\n' "$prev"; else printf '\tlocal:\n\t\t*;\n};\n'; fi
			} >>"$map"
		else
			# Insert into the node, keeping its global list sorted.
			awk -v node="$node" -v add="$missing" '
				BEGIN { n = split(add, a, /[ \n]+/) }
				$1 == node && /\{/ { innode = 1 }
				innode && /global:/ { print; inglobal = 1; next }
				inglobal && (/local:/ || /^[[:space:]]*\}/) {
					for (i = 1; i <= n; i++) if (a[i] != "") syms[++m] = a[i]
					# sort syms
					for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
						if (syms[j] < syms[i]) { t = syms[i]; syms[i] = syms[j]; syms[j] = t }
					for (i = 1; i <= m; i++) printf "\t\t%s;\n", syms[i]
					inglobal = 0; innode = !/^[[:space:]]*\}/
					print; next
				}
				inglobal {
					s = $1; sub(/;.*/, "", s)
					if (s != "") syms[++m] = s
					next
				}
				{ print }' "$map" >"$work/map.new" && cat "$work/map.new" >"$map"
		fi
		echo "abi-update: added to $node of libvnpurt.map:" $missing
	fi

	if [ -f "$debsyms" ] && ! grep -qE "^ \(symver\)$node " "$debsyms"; then
		printf ' (symver)%s %s.0\n' "$node" "$level" >>"$debsyms"
		echo "abi-update: added (symver)$node to debian/libvnpurt1.symbols"
	fi

	if [ -f "$changelog" ]; then
		local ver
		ver=$(changelog_version)
		case $ver in
		"$level".*) ;;
		*)
			local who
			who=$(sed -nE '0,/^ -- /s/^ -- (.*)  .*/\1/p' "$changelog")
			{
				printf 'vnpu (%s.0) unstable; urgency=medium\n\n' "$level"
				printf '  * API level %s (symbol node %s).\n\n' "$level" "$node"
				printf ' -- %s  %s\n\n' "$who" "$(LC_ALL=C date -R)"
				cat "$changelog"
			} >"$work/changelog.new" && cat "$work/changelog.new" >"$changelog"
			echo "abi-update: added a debian/changelog entry for $level.0"
			;;
		esac
	fi
}

update_list() {
	local lib=$1
	[ -f "$lib" ] || die "no library $lib"
	lib_exports "$lib" >"$work/exports"
	if [ -f "$list" ]; then
		load_list
		local lost
		lost=$(comm -23 <(sort "$work/list") <(sort "$work/exports"))
		if [ -n "$lost" ]; then
			echo "abi-update: refusing to rewrite the list; these exports would be lost or changed:" >&2
			echo "$lost" | sed 's/^/  /' >&2
			echo "abi-update: that breaks every program linked against $want_soname. Restore them," >&2
			echo "abi-update: or bump the soname and edit $list by hand." >&2
			exit 1
		fi
	fi
	{
		echo "# Symbols libvnpurt exports: version node, type, name."
		echo "# Checked by tools/abi-check.sh (make check); written by 'make abi-update'."
		echo "# A line that disappears or changes is an ABI break."
		echo "SONAME $(lib_soname "$lib")"
		sort -k1,1V -k3 "$work/exports"
	} >"$list.tmp" && mv "$list.tmp" "$list"
	echo "abi-update: wrote ${list#"$top"/} ($(wc -l <"$work/exports") symbols)"
}

case ${1:-} in
map)
	check_map
	;;
check)
	[ $# -eq 2 ] || die "usage: $0 check LIB"
	check_map
	check_packaging_metadata
	check_lib "$2"
	[ "$errors" = 0 ] && echo "abi-check: $(wc -l <"$work/exports") exported symbols match ${list#"$top"/}"
	;;
update-map)
	update_map
	;;
update-list)
	[ $# -eq 2 ] || die "usage: $0 update-list LIB"
	update_list "$2"
	;;
*)
	sed -n '3,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
[ "$errors" = 0 ]
