#!/bin/bash
# Boot the test kernel in QEMU and run a test plan inside it.
#
#   tools/vm/run-vm.sh [--kernel KVER] [--timeout SECS] [--mem MB] \
#                      --plan PLAN --out OUTDIR
#
#   --kernel KVER   guest kernel: /boot/vmlinuz-KVER with /lib/modules/KVER
#                   (default: newest installed 6.12.*)
#   --timeout SECS  wall-clock limit for the whole VM run (default: derived
#                   from the plan, see below)
#   --mem MB        guest memory (default 2048)
#   --plan PLAN     plan file, see tools/vm/guest-run.sh for the format
#   --out OUTDIR    output directory; emptied first (only if it is empty or
#                   was made by an earlier run of this script)
#
# Environment:
#   VNPU_VM_ACCEL      auto (default), kvm or tcg.  auto boots the kernel once
#                      under KVM (a few seconds; the verdict is cached per
#                      kernel and QEMU version in VNPU_VM_CACHE) and uses KVM
#                      only if that guest reached userspace, else software
#                      emulation (TCG), saying why in one line.  kvm fails at
#                      once if KVM is missing or unusable.
#   VNPU_VM_STALL      seconds without console output and without test
#                      progress after which the run is stopped (default 240;
#                      0 disables)
#   VNPU_KO            module to load for module groups (default
#                      <repo>/driver/vnpu.ko; any .ko or .ko.xz works)
#   VNPU_TEST_TIMEOUT  per-command timeout inside the guest (default 600)
#   VNPU_VM_CACHE      where the initramfs and the KVM verdict are cached
#                      (default <repo>/build/vm)
#   VNPU_VM_APPEND     extra kernel command line arguments
#   VNPU_VM_QEMU       the QEMU program (default qemu-system-x86_64)
#   VNPU_VM_QEMU_ARGS  extra qemu arguments (split on whitespace), e.g. "-s"
#
# The guest shares the host's whole root filesystem read-only over virtio-9p
# and chroots into it, so the repository, the module and the test binaries
# are used from their host paths.  OUTDIR is shared read-write.
#
# QEMU runs under tools/vm/qemu-watch.py, so the run never hangs: it ends
# when QEMU reports the guest stopped (internal error, panic, paused), when
# the guest kernel prints an oops, BUG, KASAN report, soft lockup or RCU
# stall, when nothing happens for VNPU_VM_STALL seconds, or at the whole-run
# limit.  That limit, unless --timeout gives one, is 300 s for booting plus,
# for every command of the plan, its timeout and 15 s, plus 60 s a group.
# A kernel that oopses or panics before the guest's init has started (the
# stock kernel failed to boot; nothing of the plan ran) is booted once more.
#
# Results in OUTDIR: console.log (full serial console; also streamed to the
# terminal), vm-checks.log (the guest's own checks), vm-runner.log (this
# script's: how the VM ended and one failure for every command that was cut
# off or never ran), dmesg.txt, tainted, exit-code (the guest's),
# GROUP/LABEL.{log,rc} per command, boot-to-first-test-seconds, accel, and
# console-boot1.log after a failed first boot.
#
# Exit status 0 only if the VM finished in time, the guest reported success
# and the console shows no kernel panic/oops/warning.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)

die() { echo "run-vm: $*" >&2; exit 1; }
usage() {
	sed -n '3,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kver='' vm_timeout='' mem=2048 plan='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kver=${2:-} && shift ;;
	--kernel=*) kver=${1#*=} ;;
	--timeout) vm_timeout=${2:-} && shift ;;
	--timeout=*) vm_timeout=${1#*=} ;;
	--mem) mem=${2:-} && shift ;;
	--mem=*) mem=${1#*=} ;;
	--plan) plan=${2:-} && shift ;;
	--plan=*) plan=${1#*=} ;;
	--out) out=${2:-} && shift ;;
	--out=*) out=${1#*=} ;;
	-h | --help) usage ;;
	*) echo "run-vm: unknown argument '$1'" >&2 && usage ;;
	esac
	shift
done
if [ -z "$plan" ] || [ -z "$out" ]; then usage; fi
[ -z "$vm_timeout" ] || [[ $vm_timeout =~ ^[0-9]+$ ]] || die "--timeout wants seconds"
[[ $mem =~ ^[0-9]+$ ]] || die "--mem wants megabytes"

if [ -z "$kver" ]; then
	# The newest distribution 6.12 kernel that has both an image and modules
	# (the debug-kernel tier, tools/debug-kernel, is only used when asked for).
	for d in $(find /lib/modules -maxdepth 1 -name '6.12.*' ! -name '*vnpudebug*' -printf '%f\n' | sort -V -r); do
		if [ -f "/boot/vmlinuz-$d" ]; then kver=$d && break; fi
	done
	[ -n "$kver" ] || die "no 6.12.* kernel installed (need /boot/vmlinuz-KVER and /lib/modules/KVER)"
fi
kernel=/boot/vmlinuz-$kver
[ -f "$kernel" ] || die "no $kernel"
[ -d "/lib/modules/$kver" ] || die "no /lib/modules/$kver"
qemu_bin=${VNPU_VM_QEMU:-qemu-system-x86_64}
command -v "$qemu_bin" >/dev/null || die "$qemu_bin not found (install qemu-system-x86)"
command -v python3 >/dev/null || die "python3 not found (run 'make deps')"
stall=${VNPU_VM_STALL:-240}
# Only the runner's own test points this elsewhere.
kvm_dev=${VNPU_VM_KVM_DEV:-/dev/kvm}
[[ $stall =~ ^[0-9]+$ ]] || die "VNPU_VM_STALL wants seconds"

[ -f "$plan" ] || die "plan $plan not found"
plan=$(realpath "$plan")
out=$(realpath -m "$out")
# Paths travel on the kernel command line, which is split on spaces.
path_re='^/[A-Za-z0-9_./+@%:=-]*$'
for p in "$repo" "$out"; do
	[[ $p =~ $path_re ]] || die "path '$p' has characters that cannot go on the kernel command line"
done
case $repo in
/proc/* | /sys/* | /dev/*) die "the repository cannot be under /proc, /sys or /dev" ;;
esac

ko=''
if [ -n "${VNPU_KO:-}" ]; then
	ko=$(realpath -m "$VNPU_KO")
	[[ $ko =~ $path_re ]] || die "VNPU_KO path '$ko' has unusable characters"
fi
# Fail before booting on plan typos or a missing module.
bash "$here/guest-run.sh" --check "$plan" || die "plan $plan has errors"
if awk '$1 == "group" && !/--no-module/ { f = 1 } END { exit !f }' "$plan"; then
	want_ko=${ko:-$repo/driver/vnpu.ko}
	[ -f "$want_ko" ] || die "plan loads a module but $want_ko does not exist (build it first)"
fi

# Empty OUTDIR, but never something that looks like it holds other data.
marker=.vnpu-vm-out
case $out in
/ | "$HOME" | "$repo" | "$repo"/tools | "$repo"/tools/*) die "refusing to use $out as output directory" ;;
esac
case $repo/ in
"$out"/*) die "refusing to use $out as output directory: it contains the repository" ;;
esac
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/$marker" ]; then
	die "$out is not empty and was not made by run-vm.sh; refusing to clean it"
fi
rm -rf "$out"
mkdir -p "$out" || die "cannot create $out"
touch "$out/$marker"
# The plan goes into OUTDIR so the guest sees it whatever its host path
# (the guest's /tmp is a fresh tmpfs).
cp "$plan" "$out/plan"

cache=${VNPU_VM_CACHE:-$repo/build/vm}
initrd=$cache/initramfs-$kver.cpio.gz
"$here/mkinitramfs.sh" "$initrd" "$kver" || die "building the initramfs failed"

# loglevel=5 after quiet: keep boot chatter off the console but show
# KERN_WARNING and worse (WARN() splats), so they are in console.log too.
append="console=ttyS0 quiet loglevel=5 panic=-1"
append+=" vnpuvm.repo=$repo vnpuvm.plan=$out/plan vnpuvm.out=$out"
[ -n "$ko" ] && append+=" vnpuvm.ko=$ko"
if [ -n "${VNPU_TEST_TIMEOUT:-}" ]; then
	[[ $VNPU_TEST_TIMEOUT =~ ^[0-9]+$ ]] || die "VNPU_TEST_TIMEOUT wants seconds"
	append+=" vnpuvm.timeout=$VNPU_TEST_TIMEOUT"
fi
[ -n "${VNPU_VM_APPEND:-}" ] && append+=" $VNPU_VM_APPEND"

# run_watched VERDICT-FILE CONSOLE-LOG TIMEOUT STALL PROGRESS-DIR QEMU-ARGS...:
# QEMU under qemu-watch.py (stdin /dev/null: qemu must not touch the terminal).
run_watched() {
	local verdict=$1 console=$2 limit=$3 stall_s=$4 progress=$5 qmpdir rc
	shift 5
	qmpdir=$(mktemp -d /tmp/vnpu-vm-qmp.XXXXXX) || return 1
	python3 "$here/qemu-watch.py" --console "$console" --qmp "$qmpdir/qmp.sock" \
		--verdict "$verdict" --timeout "$limit" --stall "$stall_s" \
		${progress:+--progress "$progress"} -- "$@" < /dev/null
	rc=$?
	rm -rf "$qmpdir"
	return "$rc"
}

# Boots the kernel under KVM with vnpuvm.probe=1: KVM is usable only if the
# guest reaches userspace.  Prints "kvm" or "tcg REASON"; cached per kernel
# and QEMU (a nested KVM may exist and still be unable to run a stock
# kernel: the guest stops with an emulation failure and QEMU waits).
probe_kvm() {
	local key file dir console verdict reason
	if [ ! -e "$kvm_dev" ]; then
		echo "tcg no $kvm_dev"
		return
	fi
	if [ ! -w "$kvm_dev" ] || [ ! -r "$kvm_dev" ]; then
		echo "tcg $kvm_dev is not accessible to $(id -un)"
		return
	fi
	key=$( { echo "$kver"; command -v "$qemu_bin"; "$qemu_bin" --version 2>&1 | head -n 1; } |
		sha256sum | cut -c1-16)
	file=$cache/kvm-verdict-$kver-$key
	if [ -s "$file" ]; then
		cat "$file"
		return
	fi
	dir=$(mktemp -d /tmp/vnpu-vm-probe.XXXXXX) || return 1
	console=$dir/console.log verdict=$dir/verdict
	run_watched "$verdict" "$console" 60 30 '' "$qemu_bin" \
		-machine q35,accel=kvm -cpu host -m 512 -smp 2 \
		-nographic -no-reboot -nic none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=5 panic=-1 vnpuvm.probe=1" > /dev/null
	if tr -d '\r' < "$console" | grep -q '^vnpu-vm: probe reached userspace'; then
		echo kvm > "$file"
	else
		reason=$(sed 's/^[a-z]*: //' "$verdict" 2>/dev/null)
		case $(cut -d: -f1 "$verdict" 2>/dev/null) in
		ok)
			# QEMU gave up by itself: its own last error says why.
			reason="$reason: $(tr -d '\r' < "$console" | grep -m 1 -i -E 'error|failed|assert' ||
				tail -n 1 "$console")"
			;;
		stopped)
			case $reason in
			*emulation\ failure* | *internal-error* | *KVM\ internal*)
				reason="guest stopped: emulation failure" ;;
			esac
			;;
		esac
		echo "tcg KVM present but unusable (${reason:-no verdict})" > "$file"
	fi
	rm -rf "$dir"
	cat "$file"
}

accel_mode=${VNPU_VM_ACCEL:-auto}
case $accel_mode in
tcg) accel=tcg accel_why="VNPU_VM_ACCEL=tcg" ;;
auto | kvm)
	read -r accel accel_why <<< "$(probe_kvm)"
	[ -n "$accel" ] || die "the KVM probe failed to run"
	if [ "$accel" = kvm ]; then
		accel_why="the KVM probe reached userspace"
	elif [ "$accel_mode" = kvm ]; then
		die "VNPU_VM_ACCEL=kvm, but $accel_why; use VNPU_VM_ACCEL=auto or tcg"
	elif [[ $accel_why == KVM\ present* ]]; then
		echo "run-vm: $accel_why; using software emulation" >&2
	fi
	;;
*) die "VNPU_VM_ACCEL wants auto, kvm or tcg, not '$accel_mode'" ;;
esac
# -cpu host passes the host's CPU through under KVM; under TCG -cpu max
# emulates every feature QEMU can (AVX2, etc.), slower but complete.
cpu=max
[ "$accel" = kvm ] && cpu=host
echo "$accel $accel_why" > "$out/accel"

qemu=("$qemu_bin"
	-machine "q35,accel=$accel" -cpu "$cpu" -m "$mem" -smp 2
	-nographic -no-reboot -nic none
	-device virtio-rng-pci
	-kernel "$kernel" -initrd "$initrd" -append "$append"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=results,security_model=none")
# qboot (qemu-system-data) boots -kernel directly and, unlike SeaBIOS, does
# not send terminal-reset escapes that clear the user's screen.
qboot=/usr/share/qemu/qboot.rom
[ -f "$qboot" ] && qemu+=(-bios "$qboot")
if [ -n "${VNPU_VM_QEMU_ARGS:-}" ]; then
	read -r -a extra <<< "$VNPU_VM_QEMU_ARGS"
	qemu+=("${extra[@]}")
fi
printf '%q ' "${qemu[@]}" > "$out/qemu-cmdline"
echo >> "$out/qemu-cmdline"

# The expected results: one "GROUP/LABEL" line per command of the plan.
mapfile -t planned < <(bash "$here/guest-run.sh" --list "$out/plan")
if [ -z "$vm_timeout" ]; then
	tmo=${VNPU_TEST_TIMEOUT:-600}
	ngroups=$(printf '%s\n' "${planned[@]}" | cut -d/ -f1 | sort -u | wc -l)
	vm_timeout=$((300 + ${#planned[@]} * (tmo + 15) + ngroups * 60))
fi

# The kernel report of a guest that died before its init ran, if it did:
# the stock kernel failed to boot, before any of the plan's code ran.
boot_failure() {
	tr -d '\r' < "$out/console.log" | grep -q '^vnpu-vm: init started' && return 1
	tr -d '\r' < "$out/console.log" | grep -E -m 1 'Kernel panic|BUG:|Oops|Call Trace:'
}

echo "run-vm: kernel $kver, accel $accel, plan $plan, out $out, timeout ${vm_timeout}s, stall ${stall}s" >&2
# A kernel that fails before userspace is booted once more: emulated
# multi-CPU guests rarely hit an int3 of the kernel's own code patching
# at boot (a stale translation of the patched bytes). The first console
# stays in console-boot1.log and vm-runner.log says why it booted again.
boot_retry=''
for boot_try in 1 2; do
	t0=$(date +%s.%N)
	run_watched "$out/vm-verdict" "$out/console.log" "$vm_timeout" "$stall" "$out" "${qemu[@]}"
	qrc=$?
	t1=$(date +%s.%N)
	[ "$boot_try" = 1 ] && boot_retry=$(boot_failure) || break
	mv "$out/console.log" "$out/console-boot1.log"
	rm -f "$out/vm-verdict"
	echo "run-vm: the kernel failed before userspace ($boot_retry); booting again" >&2
done
total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
verdict=$(cat "$out/vm-verdict" 2>/dev/null)
verdict_kind=${verdict%%:*}

boot=''
if [ -e "$out/first-test-started" ]; then
	# The file was created over 9p, so its mtime is host time.
	boot=$(awk -v a="$t0" -v b="$(stat -c %.9Y "$out/first-test-started")" \
		'BEGIN { printf "%.1f", b - a }')
	echo "$boot" > "$out/boot-to-first-test-seconds"
fi

# Lines the runner itself printed (test output may legitimately mention
# "WARNING:" etc.) are left out of the console scan.
console_bad=$(tr -d '\r' < "$out/console.log" |
	grep -v -E '^(\[[A-Za-z0-9_.+-]+/[A-Za-z0-9_.+-]+\] |\[vm-checks\] |vnpu-vm: )' |
	grep -E -m 1 'Kernel panic|BUG:|WARNING:|Oops|Call Trace:')

reason=''
guest_rc=$(cat "$out/exit-code" 2>/dev/null)
case $verdict_kind in
ok) ;;
oops) reason="${verdict#*: }" ;;
stall) reason="guest stalled: ${verdict#*: } (hung guest; raise VNPU_VM_STALL for slower tests)" ;;
timeout) reason="${verdict#*: } (guest hung or too slow; raise --timeout?)" ;;
stopped)
	reason="${verdict#*: }"
	[ "$accel" = kvm ] && reason+=" (under KVM; VNPU_VM_ACCEL=tcg avoids KVM)"
	;;
*) reason="the QEMU watcher failed (exit status $qrc)" ;;
esac
if [ -n "$reason" ]; then
	:
elif [ -n "$console_bad" ]; then
	reason="kernel problem on the console: $console_bad"
elif [ -z "$guest_rc" ]; then
	reason="guest wrote no exit code (boot or guest init failed; qemu exit status $qrc)"
elif [ "$guest_rc" != 0 ]; then
	reason="guest checks failed (exit code $guest_rc): $(grep -m 3 '^not ok' "$out/vm-checks.log" 2>/dev/null | paste -sd ';' -)"
elif [ "$qrc" -ne 0 ]; then
	reason="qemu exited with status $qrc"
fi

# vm-runner.log: how the VM ended, and, when it did not end by itself after
# the plan, every command it cut off or never reached, each one failure, so
# that the summary line and the exit status agree.
{
	n=1
	echo "TAP version 13"
	[ -z "$boot_retry" ] ||
		echo "# boot 1 failed before userspace (console-boot1.log): $boot_retry; booted again"
	# Failed guest checks are counted in vm-checks.log, not twice.
	if [ -z "$reason" ] || { [ -n "$guest_rc" ] && [ "$guest_rc" != 0 ] && [ -z "$console_bad" ] &&
		[ "$verdict_kind" = ok ]; }; then
		echo "ok 1 VM run finished ($accel, ${total}s)"
		fails=0
	else
		echo "not ok 1 VM run: $reason"
		fails=1
	fi
	if [ -z "$guest_rc" ]; then
		for r in "${planned[@]}"; do
			[ -e "$out/$r.rc" ] && continue
			n=$((n + 1)) fails=$((fails + 1))
			if [ -e "$out/$r.log" ]; then
				echo "not ok $n $r cut off: the VM ended while it ran"
			else
				echo "not ok $n $r not run: the VM ended before it"
			fi
		done
	fi
	echo "1..$n"
	echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
} > "$out/vm-runner.log"

if [ -n "$reason" ]; then
	{
		echo "----- last 60 console lines ($out/console.log) -----"
		tail -n 60 "$out/console.log" | tr -d '\r'
		echo "-----"
		grep '^not ok' "$out/vm-runner.log" | head -n 5 | sed 's/^/run-vm: /'
		echo "run-vm: total ${total}s, boot-to-first-test ${boot:-n/a}${boot:+s}"
		echo "run-vm: FAIL: $reason"
	} >&2
	exit 1
fi
# For information only: what the tests themselves reported (their pass/fail
# is judged by whoever sums the "# Totals:" lines of OUTDIR/*/*.log).
tests=$(cat "$out"/*/*.log 2>/dev/null | awk -F'[: ]+' '/^# Totals:/ {
	for (i = 3; i < NF; i += 2) sum[$i] += $(i + 1); n++ }
	END { printf "pass:%d fail:%d skip:%d error:%d (%d results lines)",
		sum["pass"], sum["fail"], sum["skip"], sum["error"], n }')
vmchecks=$(grep -h '^# Totals:' "$out/vm-checks.log" | tail -n 1)
echo "run-vm: VM OK ($accel): vm-checks ${vmchecks#\# Totals: }; tests $tests" >&2
echo "run-vm: boot-to-first-test ${boot:-n/a}${boot:+s}, total ${total}s" >&2
exit 0
