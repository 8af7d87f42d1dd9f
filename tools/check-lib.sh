# SPDX-License-Identifier: GPL-2.0-only
#
# What the checks of tools/ share (abi-check.sh, man-check.sh). Sourced,
# not run.
#
#   check_begin NAME     a scratch directory in $work, removed on exit;
#                        errors=0 and err MESSAGE..., which prints
#                        "NAME: MESSAGE" on stderr and counts it
#   public_functions H   the functions the public header H and the
#                        per-area headers it includes (H's folder's vnpu/)
#                        declare, one name a line, sorted; the compiler
#                        parses them, so comments, macros and line breaks
#                        cannot fool it. Returns 1 if H does not compile.
#   compare_sets A B ONLY_A ONLY_B
#                        for each line only in the sorted file A, err
#                        ONLY_A with %s the line; for each only in B, ONLY_B

check_begin() {
	check_name=$1
	work=$(mktemp -d "/tmp/vnpu-$1.XXXXXX")
	# shellcheck disable=SC2064 # $work is fixed now
	trap "rm -rf '$work'" EXIT
	errors=0
}

err() {
	echo "$check_name: $*" >&2
	errors=$((errors + 1))
}

public_functions() {
	local header=$1
	printf '#include "%s"\n' "$header" >"$work/h.c"
	"${CC:-gcc}" -std=gnu11 -fsyntax-only -aux-info "$work/aux" "$work/h.c" || return 1
	grep -F -e "/* $header:" -e "/* ${header%.h}/" "$work/aux" | grep -vw static |
		sed -E 's/^.*\*\/ *//; s/ *\(.*$//; s/.*[ *]//' | sort -u
}

compare_sets() {
	local s
	for s in $(comm -23 "$1" "$2"); do
		# shellcheck disable=SC2059 # the message is the format
		err "$(printf "$3" "$s")"
	done
	for s in $(comm -13 "$1" "$2"); do
		# shellcheck disable=SC2059
		err "$(printf "$4" "$s")"
	done
}
