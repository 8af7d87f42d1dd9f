#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Keeps the runtime's layers (Documentation/architecture.rst): fails when a
# file of libruntime/ includes a header of a layer it may not call.
#
#   tools/layer-check.sh [LIBRUNTIME_DIR]
#
# The layers, and what each may include besides its own folder and the
# public headers (include/):
#
#   core/    nothing
#   mm/      core/
#   multi/   core/
#   graph/   core/ mm/
#
# The files at the top of libruntime/ (init.c) sit above every layer and
# may include any. A quoted include names its own folder's header by name
# ("pool_core.h") and another layer's with its folder ("core/runtime.h");
# "../x/y.h" is resolved too. A folder missing from the table is an error:
# a new layer says where it stands here first.
#
# Exit status 0 when every include goes down or sideways within a layer;
# each violation is one line on stderr.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dir=${1:-$top/libruntime}
dir=$(cd "$dir" && pwd -P) || exit 2

declare -A may=(
	[core]=''
	[mm]='core'
	[multi]='core'
	[graph]='core mm'
)
# Folders that are not layers: the public headers and the ABI list.
not_layers=' include abi '

errors=0
err() {
	echo "layer-check: $*" >&2
	errors=$((errors + 1))
}

# The layer folder the include "$2" of file "$1" (relative to $dir)
# resolves to; nothing when it is no file of $dir (system, generated).
resolve() {
	local from=$1 inc=$2 path
	if [ -f "$dir/$(dirname "$from")/$inc" ]; then
		path=$(realpath -m --relative-to="$dir" "$dir/$(dirname "$from")/$inc")
	elif [ -f "$dir/$inc" ]; then
		path=$(realpath -m --relative-to="$dir" "$dir/$inc")
	else
		return
	fi
	case $path in
	*/*) echo "${path%%/*}" ;;
	*) echo . ;;
	esac
}

# "core/ mm/", or "its own folder": the other layers layer $1 may include.
allowed() {
	local l out=''
	for l in ${may[$1]}; do
		out+="${out:+ }$l/"
	done
	echo "${out:-its own folder}"
}

files=0
for sub in "$dir"/*/; do
	layer=$(basename "$sub")
	case $not_layers in *" $layer "*) continue ;; esac
	if [ -z "${may[$layer]+set}" ]; then
		err "libruntime/$layer/ is not in the layer table of tools/layer-check.sh"
		continue
	fi
	while IFS= read -r f; do
		files=$((files + 1))
		rel=${f#"$dir"/}
		while IFS=: read -r line inc; do
			to=$(resolve "$rel" "$inc")
			[ -n "$to" ] || continue
			case $to in
			"$layer" | include) continue ;;
			.) err "$rel:$line includes \"$inc\": a file above every layer" ;;
			*)
				case " ${may[$layer]} " in
				*" $to "*) ;;
				*) err "$rel:$line includes \"$inc\": $layer/ may not include $to/ (it may include $(allowed "$layer"))" ;;
				esac
				;;
			esac
		done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f" |
			sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
	done < <(find "$sub" -type f -name '*.[ch]' | sort)
done

if [ "$errors" = 0 ]; then
	echo "layer-check: $files files of ${dir##*/}/ include only their own layer and those below"
fi
[ "$errors" = 0 ]
