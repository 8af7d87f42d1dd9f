#!/bin/bash
# Boot the test kernel in QEMU and run a test plan inside it.
#
#   tools/vm/run-vm.sh [--kernel KVER] [--timeout SECS] [--mem MB] \
#                      --plan PLAN --out OUTDIR
#
#   --kernel KVER   guest kernel: /boot/vmlinuz-KVER with /lib/modules/KVER
#                   (default: newest installed 6.12.*)
#   --timeout SECS  wall-clock limit for the whole VM run (default 3600)
#   --mem MB        guest memory (default 2048)
#   --plan PLAN     plan file, see tools/vm/guest-run.sh for the format
#   --out OUTDIR    output directory; emptied first (only if it is empty or
#                   was made by an earlier run of this script)
#
# Environment:
#   VNPU_KO            module to load for module groups (default
#                      <repo>/driver/vnpu.ko; any .ko or .ko.xz works)
#   VNPU_TEST_TIMEOUT  per-command timeout inside the guest (default 600)
#   VNPU_VM_CACHE      where the initramfs is cached (default <repo>/build/vm)
#   VNPU_VM_APPEND     extra kernel command line arguments
#   VNPU_VM_QEMU_ARGS  extra qemu arguments (split on whitespace), e.g. "-s"
#
# The guest shares the host's whole root filesystem read-only over virtio-9p
# and chroots into it, so the repository, the module and the test binaries
# are used from their host paths.  OUTDIR is shared read-write.
#
# Results in OUTDIR: console.log (full serial console; also streamed to the
# terminal), vm-checks.log, dmesg.txt, tainted, exit-code (the guest's),
# GROUP/LABEL.{log,rc} per command, boot-to-first-test-seconds.
#
# Exit status 0 only if the VM finished in time, the guest reported success
# and the console shows no kernel panic/oops/warning.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)

die() { echo "run-vm: $*" >&2; exit 1; }
usage() {
	sed -n '3,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kver='' vm_timeout=3600 mem=2048 plan='' out=''
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
[[ $vm_timeout =~ ^[0-9]+$ ]] || die "--timeout wants seconds"
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
for tool in qemu-system-x86_64 timeout; do
	command -v "$tool" >/dev/null || die "$tool not found (install qemu-system-x86)"
done

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

accel=tcg
[ -w /dev/kvm ] && accel=kvm
qemu=(qemu-system-x86_64
	-machine "q35,accel=$accel" -cpu max -m "$mem" -smp 2
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

echo "run-vm: kernel $kver, accel $accel, plan $plan, out $out, timeout ${vm_timeout}s" >&2
t0=$(date +%s.%N)
# stdin is /dev/null: qemu must not touch the terminal, and under timeout it
# runs in a background process group where reading the tty would stop it.
timeout --kill-after=10 "$vm_timeout" "${qemu[@]}" < /dev/null 2>&1 |
	tee "$out/console.log"
qrc=${PIPESTATUS[0]}
t1=$(date +%s.%N)
total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

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
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	reason="VM timed out after ${vm_timeout}s (guest hung or too slow; raise --timeout?)"
elif [ -n "$console_bad" ]; then
	reason="kernel problem on the console: $console_bad"
elif [ -z "$guest_rc" ]; then
	reason="guest wrote no exit code (boot or guest init failed; qemu exit status $qrc)"
elif [ "$guest_rc" != 0 ]; then
	reason="guest checks failed (exit code $guest_rc): $(grep -m 3 '^not ok' "$out/vm-checks.log" 2>/dev/null | paste -sd ';' -)"
elif [ "$qrc" -ne 0 ]; then
	reason="qemu exited with status $qrc"
fi

if [ -n "$reason" ]; then
	{
		echo "----- last 60 console lines ($out/console.log) -----"
		tail -n 60 "$out/console.log" | tr -d '\r'
		echo "-----"
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
echo "run-vm: VM OK: vm-checks ${vmchecks#\# Totals: }; tests $tests" >&2
echo "run-vm: boot-to-first-test ${boot:-n/a}${boot:+s}, total ${total}s" >&2
exit 0
