#!/bin/bash
# Run a test plan inside the vnpu test VM.
#
#   guest-run.sh PLAN OUTDIR
#   guest-run.sh --check PLAN     (syntax check only; used by run-vm.sh)
#   guest-run.sh --list PLAN      (prints GROUP/LABEL of every command)
#
# Started by tools/vm/init inside a chroot of the host's root filesystem, so
# the host's bash, coreutils, kmod and test binaries are used unchanged.
# It is plain bash and can also be run by hand on a disposable machine.
#
# Plan format, one directive per line:
#
#   # comment (also blank lines)
#   group NAME [--no-module] [MODULE_PARAM=VALUE ...]
#   run LABEL COMMAND [ARGS...]
#
#   group  starts a group of commands.  Unless --no-module is given, the
#          module under test ($VNPU_KO, default <repo>/driver/vnpu.ko) is
#          loaded for the group: its dependencies (modinfo -F depends) via
#          modprobe, then `insmod $VNPU_KO MODULE_PARAM=VALUE ...`.  After the
#          group's last command the module is removed with rmmod, which must
#          succeed (retried for a few seconds while the module is busy).
#          Words are split on whitespace; no quoting in group lines.
#   run    runs COMMAND in the current group.  The rest of the line after
#          LABEL is a bash command line (quotes, $VAR, redirections work).
#          cwd is the repository root; the environment has
#            VNPU_KO     module file under test
#            VNPU_GROUP  NAME of the group
#            VNPU_OUT    OUTDIR/NAME (exists, writable)
#          It runs under `timeout` ($VNPU_TEST_TIMEOUT seconds, default 600)
#          with stdin from /dev/null.  stdout+stderr go to OUTDIR/NAME/LABEL.log
#          and to the console prefixed with "[NAME/LABEL] "; the exit status
#          goes to OUTDIR/NAME/LABEL.rc.
#
# NAME and LABEL are limited to [A-Za-z0-9_.+-] (they become file names).
#
# A command reports its own results (kselftest TAP with a "# Totals:" line).
# Its exit status is not counted here, except that a non-zero exit without any
# "# Totals:" line, or a timeout, counts as one failure.
#
# This script's own checks go to OUTDIR/vm-checks.log in the same TAP style:
# one per module load and unload, one for plan syntax errors, and at the end
# "kernel log clean" (no oops/warning/splat patterns in dmesg) and "kernel
# taint clean" (only O=4096 and E=8192 allowed), closing with the
# "# Totals: pass:P fail:F xfail:0 xpass:0 skip:0 error:0" line.  Also saved:
# OUTDIR/dmesg.txt, OUTDIR/tainted, OUTDIR/first-test-started (created when the
# first command starts; holds the guest uptime then).
#
# While a command runs, OUTDIR/progress is rewritten every 20 seconds (for
# at most the command's timeout and a minute), so the host can tell a silent
# but working test from a stalled guest.
#
# Exit status: 0 if every check passed, 1 otherwise.
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 PLAN OUTDIR | $0 --check PLAN" >&2
	exit 2
fi
plan=$1
out=$2
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
ko=${VNPU_KO:-$repo/driver/vnpu.ko}
tmo=${VNPU_TEST_TIMEOUT:-600}
checks=$out/vm-checks.log

# Patterns that mean the kernel complained, whatever the tests reported.
dmesg_bad='BUG:|WARNING:|Oops|general protection fault|KASAN:|UBSAN:|possible circular locking|sleeping function called from invalid context|Call Trace:|kmemleak:|hung_task|INFO: task [^ ]* blocked|soft lockup|rcu: INFO:|self-detected stall|list_add corruption|ODEBUG:'
# Taint bits that are expected for an unsigned out-of-tree module.
taint_ok=$((4096 | 8192))

# parse_plan PLAN ERRFUNC: fill op[], arg1[], arg2[] with the plan's
# directives (group: NAME, "PARAMS..."; run: LABEL, COMMAND).  Every syntax
# error is reported through ERRFUNC; returns 1 if there was any, so that a
# typo is caught before anything runs.
parse_plan() {
	local file=$1 errf=$2 errors=0 n=0 line kw rest label cmd w cur=''
	local -a words
	local -A groups=() labels=()
	local name_re='^[A-Za-z0-9_.+-]+$'
	op=() arg1=() arg2=()
	if [ ! -r "$file" ]; then
		"$errf" "plan $file not readable"
		return 1
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		read -r kw rest <<< "$line"
		case ${kw:-#} in
		\#*) continue ;;
		group)
			read -r -a words <<< "$rest"
			if [ ${#words[@]} -eq 0 ] || ! [[ ${words[0]} =~ $name_re ]]; then
				"$errf" "plan line $n: bad or missing group name"
				errors=$((errors + 1))
				continue
			fi
			if [ -n "${groups[${words[0]}]:-}" ]; then
				"$errf" "plan line $n: duplicate group ${words[0]}"
				errors=$((errors + 1))
			fi
			for w in "${words[@]:1}"; do
				case $w in
				--no-module | [A-Za-z_]*=*) ;;
				*)
					"$errf" "plan line $n: bad group argument '$w' (want --no-module or PARAM=VALUE)"
					errors=$((errors + 1))
					;;
				esac
			done
			cur=${words[0]}
			groups[$cur]=1
			op+=(group) arg1+=("$cur") arg2+=("${words[*]:1}")
			;;
		run)
			read -r label cmd <<< "$rest"
			if [ -z "$cur" ]; then
				"$errf" "plan line $n: run before any group"
				errors=$((errors + 1))
			elif ! [[ ${label:-} =~ $name_re ]] || [ -z "${cmd:-}" ]; then
				"$errf" "plan line $n: want: run LABEL COMMAND..."
				errors=$((errors + 1))
			elif [ -n "${labels[$cur/$label]:-}" ]; then
				"$errf" "plan line $n: duplicate label $cur/$label"
				errors=$((errors + 1))
			else
				labels[$cur/$label]=1
				op+=(run) arg1+=("$label") arg2+=("$cmd")
			fi
			;;
		*)
			"$errf" "plan line $n: unknown directive '$kw'"
			errors=$((errors + 1))
			;;
		esac
	done < "$file"
	[ "$errors" -eq 0 ]
}

stderr() { echo "$*" >&2; }
if [ "$1" = --check ]; then
	# Host-side syntax check (run-vm.sh), touches nothing.
	parse_plan "$2" stderr
	exit
fi
if [ "$1" = --list ]; then
	parse_plan "$2" stderr || exit
	g=''
	for i in "${!op[@]}"; do
		case ${op[$i]} in
		group) g=${arg1[$i]} ;;
		run) echo "$g/${arg1[$i]}" ;;
		esac
	done
	exit 0
fi

mkdir -p "$out" || exit 1
: > "$checks" || exit 1
[[ $tmo =~ ^[0-9]+$ ]] || { echo "bad VNPU_TEST_TIMEOUT '$tmo'" >&2; exit 1; }

npass=0 nfail=0 ncheck=0

# emit LINE: append to vm-checks.log and show on the console.
emit() {
	echo "$1" >> "$checks"
	echo "[vm-checks] $1"
}
# check RESULT(0=pass) DESCRIPTION
check() {
	ncheck=$((ncheck + 1))
	if [ "$1" -eq 0 ]; then
		npass=$((npass + 1))
		emit "ok $ncheck $2"
	else
		nfail=$((nfail + 1))
		emit "not ok $ncheck $2"
	fi
}
diag() { emit "# $*"; }

# Module name as the kernel knows it: from modinfo, else from the file name.
module_name() {
	local n
	n=$(modinfo -F name "$1" 2>/dev/null) || n=
	if [ -z "$n" ]; then
		n=$(basename "$1")
		n=${n%%.ko*}
	fi
	echo "${n//-/_}"
}

modname=$(module_name "$ko")

# unload_module: rmmod, retrying while the module is still busy (e.g. a
# killed test's file descriptors are still being released).
unload_module() {
	local i
	for i in $(seq 1 20); do
		if rmmod "$modname" 2>/dev/null; then
			return 0
		fi
		[ -e "/sys/module/$modname/initstate" ] || return 0
		[ "$i" -eq 1 ] && echo "$modname busy (refcnt $(cat "/sys/module/$modname/refcnt" 2>/dev/null)), retrying for 10s"
		sleep 0.5
	done
	rmmod "$modname" # once more, showing the error
}

# load_module PARAMS...: dependencies via modprobe, then insmod.
load_module() {
	local deps dep before unknown
	if [ ! -f "$ko" ]; then
		echo "module file $ko not found"
		return 1
	fi
	if [ -e "/sys/module/$modname/initstate" ]; then
		echo "$modname still loaded from an earlier group, removing it"
		unload_module || return 1
	fi
	deps=$(modinfo -F depends "$ko") || return 1
	for dep in ${deps//,/ }; do
		modprobe "$dep" || { echo "modprobe $dep failed"; return 1; }
	done
	before=$(dmesg | wc -l)
	insmod "$ko" "$@" || return 1
	# The kernel only warns about unknown parameters; a typo in the plan
	# must not silently test the defaults.
	unknown=$(dmesg | tail -n +"$((before + 1))" | grep -F "$modname: unknown parameter")
	if [ -n "$unknown" ]; then
		echo "$unknown"
		unload_module
		return 1
	fi
}

# logged FILE CMD...: run CMD, show its output on the console and append it
# to FILE (in order, before the check line that follows); keeps CMD's status.
logged() {
	local file=$1 text rc
	shift
	text=$("$@" 2>&1)
	rc=$?
	if [ -n "$text" ]; then
		echo "$text"
		echo "$text" >> "$file"
	fi
	return "$rc"
}

group='' group_loaded=0 group_skip=0

end_group() {
	[ -n "$group" ] || return 0
	if [ "$group_loaded" = 1 ]; then
		local rc
		logged "$out/$group/module.log" unload_module
		rc=$?
		check "$rc" "unload $group"
		[ "$rc" -eq 0 ] || dmesg | tail -n 10 | sed 's/^/# dmesg: /' | while IFS= read -r l; do emit "$l"; done
	fi
	group='' group_loaded=0 group_skip=0
}

# start_group NAME [--no-module] [PARAM=VALUE...]
start_group() {
	local name=$1 nomod=0 w rc
	local -a params=()
	shift
	for w in "$@"; do
		case $w in
		--no-module) nomod=1 ;;
		*) params+=("$w") ;;
		esac
	done
	group=$name
	mkdir -p "$out/$group"
	if [ "$nomod" = 0 ]; then
		echo "vnpu-vm: group $group: loading $ko${params[*]:+ ${params[*]}}"
		logged "$out/$group/module.log" load_module "${params[@]}"
		rc=$?
		check "$rc" "load $group"
		if [ "$rc" -eq 0 ]; then
			group_loaded=1
		else
			group_skip=1
			dmesg | tail -n 10 | sed 's/^/# dmesg: /' | while IFS= read -r l; do emit "$l"; done
		fi
	else
		echo "vnpu-vm: group $group (no module)"
	fi
}

# run_cmd LABEL COMMAND-LINE
run_cmd() {
	local label=$1 cmd=$2 gdir=$out/$group rc
	local log=$gdir/$label.log
	if [ "$group_skip" = 1 ]; then
		echo "vnpu-vm: skipping $group/$label: module load failed"
		return 0
	fi
	if [ ! -e "$out/first-test-started" ]; then
		# Created over 9p, so its mtime is the host's clock (run-vm.sh uses it).
		cut -d' ' -f1 /proc/uptime > "$out/first-test-started"
		echo "vnpu-vm: first test starting"
	fi
	echo "vnpu-vm: run $group/$label: $cmd"
	(
		for _ in $(seq 1 $(((tmo + 60) / 20 + 1))); do
			sleep 20
			echo "$group/$label" > "$out/progress" 2>/dev/null || exit
		done
	) &
	local ticker=$!
	(
		cd "$repo" || exit 1
		export VNPU_KO=$ko VNPU_GROUP=$group VNPU_OUT=$gdir
		exec timeout --kill-after=10 "$tmo" bash -c "$cmd"
	) < /dev/null 2>&1 | tee "$log" | sed -u "s|^|[$group/$label] |"
	rc=${PIPESTATUS[0]}
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
	echo "$rc" > "$gdir/$label.rc"
	echo "vnpu-vm: run $group/$label: exit $rc"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		check 1 "run $group/$label timed out after ${tmo}s"
	elif [ "$rc" -ne 0 ] && ! grep -q '# Totals:' "$log"; then
		check 1 "run $group/$label exited $rc without results"
	fi
}

emit "TAP version 13"
if ! parse_plan "$plan" diag; then
	check 1 "plan $plan valid"
	op=()
fi
for i in "${!op[@]}"; do
	case ${op[$i]} in
	group)
		end_group
		read -r -a words <<< "${arg2[$i]}"
		start_group "${arg1[$i]}" "${words[@]}"
		;;
	run)
		run_cmd "${arg1[$i]}" "${arg2[$i]}"
		;;
	esac
done
end_group

# Kernel health at the end of the run.
if [ -w /sys/kernel/debug/kmemleak ]; then
	# Only on kernels built with kmemleak.  Objects younger than ~5 s are
	# not reported, and a second scan confirms, as the kernel docs advise.
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$out/kmemleak.txt"
	if [ -s "$out/kmemleak.txt" ]; then
		echo "kmemleak: leaks reported, see kmemleak.txt" > /dev/kmsg
	fi
fi
dmesg > "$out/dmesg.txt"
# kmemleak's own start-up lines are not findings.
bad=$(grep -E -- "$dmesg_bad" "$out/dmesg.txt" |
	grep -v -E 'kmemleak: (Kernel memory leak detector initialized|Automatic memory scanning thread)')
if [ -n "$bad" ]; then
	head -n 20 <<< "$bad" | while IFS= read -r l; do diag "dmesg: $l"; done
	check 1 "kernel log clean"
else
	check 0 "kernel log clean"
fi
tainted=$(cat /proc/sys/kernel/tainted)
echo "$tainted" > "$out/tainted"
if [[ $tainted =~ ^[0-9]+$ ]] && [ $((tainted & ~taint_ok)) -eq 0 ]; then
	check 0 "kernel taint clean (tainted=$tainted)"
else
	bits=
	for b in $(seq 0 31); do
		[ $(((tainted >> b) & 1)) -eq 1 ] && bits="$bits $b"
	done
	diag "unexpected taint bits:$bits (see Documentation/admin-guide/tainted-kernels.rst)"
	check 1 "kernel taint clean (tainted=$tainted)"
fi

emit "1..$ncheck"
emit "# Totals: pass:$npass fail:$nfail xfail:0 xpass:0 skip:0 error:0"
sync
[ "$nfail" -eq 0 ]
