#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Tests of the test VM runner itself (tools/vm/run-vm.sh), on the host, with
# a fake accelerator: a QEMU wrapper that misbehaves the ways real machines
# do when asked for KVM (the guest stops with an internal error and QEMU
# waits; QEMU aborts at start; the guest stays paused) and otherwise runs
# the real QEMU under software emulation. Also a guest that hangs silently,
# a guest kernel that oopses, and a QEMU that does not exit after the guest
# powered off. Every verdict must come within 60 s.
#
# Needs the test kernel (make deps) and python3; KSFT_SKIP (4) without them.
set -u
cd "$(dirname "$0")/../.."
repo=$PWD
# The runner's settings of the calling environment (make check under
# VNPU_VM_ACCEL=tcg, say) must not change what these cases test.
unset VNPU_VM_ACCEL VNPU_VM_STALL VNPU_VM_APPEND VNPU_VM_QEMU_ARGS VNPU_TEST_TIMEOUT VNPU_KO

kver=$(find /lib/modules -maxdepth 1 -name '6.12.*' ! -name '*vnpudebug*' -printf '%f\n' | sort -V | tail -n 1)
if [ -z "$kver" ] || [ ! -f "/boot/vmlinuz-$kver" ] || ! command -v qemu-system-x86_64 >/dev/null ||
	! command -v python3 >/dev/null; then
	echo "1..0 # SKIP no 6.12 kernel, QEMU or python3 (run make deps)"
	exit 4
fi

tmp=$(mktemp -d /tmp/vnpu-run-vm-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
real_qemu=$(command -v qemu-system-x86_64)

# The fake QEMU. FAKE_MODE says what it does when asked for KVM (and, for
# "silent" and "oops", under TCG too); everything else runs the real QEMU.
cat > "$tmp/fake-qemu" <<EOF
#!/usr/bin/env python3
import os, socket, sys, threading, time
args = sys.argv[1:]
mode = os.environ.get("FAKE_MODE", "")
kvm = any("accel=kvm" in a for a in args)
with open("$tmp/invocations", "a") as f:
    f.write(("kvm" if kvm else "tcg") + "\n")
# oops-once: the first boot oopses before userspace, later ones are real.
if mode == "oops-once" and not kvm:
    boots = open("$tmp/invocations").read().count("tcg")
    mode = "oops" if boots == 1 else ""
# off-hang: the real QEMU, but the process does not end after the guest
# powered off (as QEMU under TCG has been seen to hang there).
if mode == "off-hang" and not kvm and "--version" not in args:
    import subprocess
    p = subprocess.Popen(["$real_qemu"] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for chunk in iter(lambda: p.stdout.read1(4096), b""):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    p.wait()
    time.sleep(3600)
if "--version" in args or not (kvm or mode in ("silent", "oops", "off-shutdown")):
    os.execv("$real_qemu", ["$real_qemu"] + args)
status = {"internal-error": "internal-error", "paused": "paused",
          "off-shutdown": "shutdown"}.get(mode, "running")
if mode == "abort":
    print("qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69", flush=True)
    os.abort()
# off-shutdown: the power-off line well before QMP answers "shutdown".
if mode == "off-shutdown":
    print("[    5.000000] reboot: Power down", flush=True)
    time.sleep(1.5)
qmp = next(a.split(",")[0][5:] for a in args if a.startswith("unix:"))
srv = socket.socket(socket.AF_UNIX)
srv.bind(qmp)
srv.listen(4)
def serve():
    while True:
        c, _ = srv.accept()
        c.sendall(b'{"QMP": {"version": {}, "capabilities": []}}\n')
        for line in c.makefile():
            if "query-status" in line:
                c.sendall(('{"return": {"status": "%s", "running": false}}\n' % status).encode())
            else:
                c.sendall(b'{"return": {}}\n')
threading.Thread(target=serve, daemon=True).start()
if mode == "internal-error":
    print("KVM internal error. Suberror: 1\nemulation failure", flush=True)
elif mode == "silent":
    print("[    0.000000] Linux version 6.12 (fake)", flush=True)
elif mode == "oops":
    print("[    1.000000] BUG: unable to handle page fault for address: 00830b0323ed56bd", flush=True)
    print("[    1.000001] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI", flush=True)
    print("[    1.000002] Call Trace:", flush=True)
time.sleep(3600)
EOF
chmod +x "$tmp/fake-qemu"
: > "$tmp/kvm"	# stands in for /dev/kvm

printf 'group smoke --no-module\nrun hello echo hello from the guest\nrun second true\n' > "$tmp/plan"

n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)) fails=$((fails + 1)); echo "not ok $n $*"; }
# expect COND DESCRIPTION: COND is a shell test, evaluated now.
expect() { if eval "$1"; then ok "$2"; else not_ok "$2"; sed 's/^/# /' "$tmp/err" | tail -n 15; fi; }

# run NAME [ENV=VALUE...]: run-vm.sh on the smoke plan with the fake QEMU;
# sets rc, secs, and $tmp/err (its stderr), $tmp/NAME (its OUTDIR).
run() {
	local name=$1 t0
	shift
	: > "$tmp/invocations"
	t0=$(date +%s)
	env VNPU_VM_QEMU="$tmp/fake-qemu" VNPU_VM_KVM_DEV="$tmp/kvm" VNPU_VM_CACHE="$tmp/cache" \
		"$@" tools/vm/run-vm.sh --plan "$tmp/plan" --out "$tmp/$name" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	secs=$(($(date +%s) - t0))
}

echo "TAP version 13"

# KVM that stops the guest with an internal error: auto falls back in one
# line and the tests still run (under TCG).
run auto FAKE_MODE=internal-error
expect '[ $rc = 0 ]' "auto, KVM internal error: the run passes under TCG (exit $rc)"
expect 'grep -q "^run-vm: KVM present but unusable (guest stopped: emulation failure); using software emulation$" "$tmp/err"' \
	"auto, KVM internal error: one line says why it falls back"
expect 'grep -q "^tcg " "$tmp/auto/accel" && grep -q "hello from the guest" "$tmp/auto/smoke/hello.log"' \
	"auto, KVM internal error: the plan ran under TCG"
expect '[ $secs -lt 60 ]' "auto, KVM internal error: verdict and run within 60 s (${secs}s)"

# The verdict is cached: the next run does not probe KVM again.
run cached FAKE_MODE=internal-error
expect '[ $rc = 0 ] && ! grep -q kvm "$tmp/invocations"' "auto: the KVM verdict is cached (no second probe)"

# Forced KVM that cannot run the guest: a clear error, fast, no hang.
rm -rf "$tmp/cache"
run forced FAKE_MODE=internal-error VNPU_VM_ACCEL=kvm
expect '[ $rc != 0 ] && grep -q "VNPU_VM_ACCEL=kvm, but KVM present but unusable (guest stopped: emulation failure)" "$tmp/err"' \
	"forced kvm, KVM internal error: a clear error (exit $rc)"
expect '[ $secs -lt 60 ]' "forced kvm, KVM internal error: fails within 60 s (${secs}s)"

# QEMU that aborts at start under KVM (a CPU model the host cannot set up).
rm -rf "$tmp/cache"
run abort FAKE_MODE=abort
expect '[ $rc = 0 ] && grep -q "^run-vm: KVM present but unusable (.*failed to set MSR" "$tmp/err"' \
	"auto, QEMU aborts under KVM: falls back to TCG with QEMU's own error"

# A guest that stays paused under KVM.
rm -rf "$tmp/cache"
run paused FAKE_MODE=paused
expect '[ $rc = 0 ] && grep -q "^run-vm: KVM present but unusable (guest stopped: QEMU status paused)" "$tmp/err"' \
	"auto, guest paused under KVM: falls back to TCG"

# No KVM device at all: TCG without a probe, and forced kvm is an error.
rm -rf "$tmp/cache"
run nokvm FAKE_MODE=internal-error VNPU_VM_KVM_DEV="$tmp/none"
expect '[ $rc = 0 ] && ! grep -q kvm "$tmp/invocations" && ! grep -q "KVM present" "$tmp/err"' \
	"auto, no KVM device: TCG, no probe, no message"
run nokvm-forced VNPU_VM_ACCEL=kvm VNPU_VM_KVM_DEV="$tmp/none"
expect '[ $rc != 0 ] && grep -q "VNPU_VM_ACCEL=kvm, but no $tmp/none" "$tmp/err"' "forced kvm, no KVM device: a clear error"
run badaccel VNPU_VM_ACCEL=fast
expect '[ $rc != 0 ] && grep -q "VNPU_VM_ACCEL wants auto, kvm or tcg" "$tmp/err"' "a bad VNPU_VM_ACCEL is refused"

# A guest that hangs silently is stopped at the stall time, and every
# command of the plan counts as a failure.
run silent FAKE_MODE=silent VNPU_VM_ACCEL=tcg VNPU_VM_STALL=5
expect '[ $rc != 0 ] && grep -q "guest stalled: no console output and no test progress for 5s" "$tmp/err"' \
	"silent guest: stopped as stalled (exit $rc)"
expect '[ $secs -lt 30 ]' "silent guest: stopped near the stall time (${secs}s)"
expect 'grep -q "^not ok 2 smoke/hello not run" "$tmp/silent/vm-runner.log" &&
	grep -q "^# Totals: pass:0 fail:3 " "$tmp/silent/vm-runner.log"' \
	"silent guest: the runner's log counts the stall and both commands as failures"

# A kernel oops ends the run at once, with the trace.
run oops FAKE_MODE=oops VNPU_VM_ACCEL=tcg
expect '[ $rc != 0 ] && grep -q "FAIL: kernel report on the console: .*BUG: unable to handle page fault" "$tmp/err"' \
	"kernel oops: the run fails with the report (exit $rc)"
expect '[ $secs -lt 30 ] && grep -q "Call Trace:" "$tmp/oops/console.log"' \
	"kernel oops: ended within seconds (${secs}s), trace kept"

expect '[ "$(grep -c tcg "$tmp/invocations")" = 2 ] && [ -s "$tmp/oops/console-boot1.log" ]' \
	"kernel oops before userspace: booted once more, and only once"

# The summary line agrees with the exit status when the VM was cut short.
summary=$(build/bin/vnpu-test-summary "$tmp/oops/vm-runner.log" 2>&1)
expect '[[ $summary == *"0 passed, 3 failed"* ]]' "kernel oops: summary says '${summary##*$'\n'}'"

# A kernel that fails before userspace once, then boots: the plan runs,
# and the runner's log says why the guest was booted twice.
run oops-once FAKE_MODE=oops-once VNPU_VM_ACCEL=tcg
expect '[ $rc = 0 ] && grep -q "hello from the guest" "$tmp/oops-once/smoke/hello.log"' \
	"kernel oops at the first boot only: the second boot runs the plan (exit $rc)"
expect 'grep -q "^# boot 1 failed before userspace (console-boot1.log): .*BUG: unable to handle page fault" \
	"$tmp/oops-once/vm-runner.log" && grep -q "Call Trace:" "$tmp/oops-once/console-boot1.log"' \
	"kernel oops at the first boot only: vm-runner.log and console-boot1.log keep the report"

# QEMU that does not exit after the guest powered off: stopped 10 s later,
# and the run counts as finished (it stalled for VNPU_VM_STALL before).
run off-hang FAKE_MODE=off-hang VNPU_VM_ACCEL=tcg VNPU_VM_STALL=40
expect '[ $rc = 0 ] && grep -q "hello from the guest" "$tmp/off-hang/smoke/hello.log" &&
	grep -q "^ok 1 VM run finished" "$tmp/off-hang/vm-runner.log"' \
	"QEMU hanging after the guest powered off: the run passes (exit $rc)"
expect 'grep -q "^ok: the guest powered off; QEMU had not exited" "$tmp/off-hang/vm-verdict"' \
	"QEMU hanging after the guest powered off: stopped after its grace, the verdict says so (${secs}s)"

# A guest that powered off while QMP says shutdown (QEMU caught on its way
# out, or staying there): a power-off, not a stopped guest.
run off-shutdown FAKE_MODE=off-shutdown VNPU_VM_ACCEL=tcg VNPU_VM_STALL=40
expect 'grep -q "^ok: the guest powered off; QMP said shutdown" "$tmp/off-shutdown/vm-verdict" &&
	! grep -q "guest stopped" "$tmp/err"' \
	"QEMU in its shutdown state after the guest powered off: the verdict is a power-off (${secs}s)"

echo "1..$n"
echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
[ "$fails" = 0 ]
