#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run QEMU for the test VM and make sure it never hangs.

    qemu-watch.py --console LOG --qmp SOCKET --verdict FILE
                  [--timeout S] [--stall S] [--progress DIR] [--grace S]
                  -- QEMU [ARGS...]

QEMU is started with "-qmp unix:SOCKET,server=on,wait=off" added, its
output (the guest's serial console and QEMU's own messages) is copied to
stdout and to LOG, and the run is ended by killing QEMU when

  - QEMU reports that the guest stopped: QMP query-status says
    internal-error, guest-panicked, io-error, shutdown or watchdog, or the
    guest stays paused (as under a nested KVM that cannot emulate an
    instruction), or QEMU prints "KVM internal error";
  - the guest kernel reports an oops, a BUG, a panic, a KASAN report, a soft
    lockup or an RCU stall on the console (LOG keeps GRACE seconds of the
    trace that follows);
  - for STALL seconds the console printed nothing and no file under DIR
    changed (the guest writes its results and a progress file there);
  - the whole run took longer than TIMEOUT seconds.

A guest that powered off (the kernel's last line, "reboot: Power down")
has ended the run: if QEMU has not exited OFF_GRACE seconds later (it
has been seen to hang there under software emulation), or QMP then says
shutdown (QEMU caught on its way out, not a stopped guest), it is killed
and the run counts as QEMU's exit with status 0, which a power-off gives.

Lines of the test runner's own output ("[group/label] ...", "vnpu-vm: ...",
"[vm-checks] ...") are not scanned for kernel reports: tests may print those
words. The verdict goes to FILE as one line "KIND: reason", where KIND is
ok (QEMU exited by itself, or the guest powered off), stopped, oops, stall
or timeout; the exit status is QEMU's own when it exited by itself, 0 when
the guest powered off and QEMU was stopped, else 70 (stopped), 71 (oops),
72 (stall) or 73 (timeout).
"""
import argparse
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time

EXIT_CODES = {"stopped": 70, "oops": 71, "stall": 72, "timeout": 73}
STOPPED_NOW = {"internal-error", "guest-panicked", "io-error", "shutdown", "watchdog"}
# Paused for this many polls in a row (about a second each) counts as stopped.
PAUSED_POLLS = 3
RUNNER_LINE = re.compile(r"^(\[[A-Za-z0-9_.+-]+/[A-Za-z0-9_.+-]+\] |\[vm-checks\] |vnpu-vm: )")
KERNEL_REPORT = re.compile(
    r"Oops: |BUG: |Kernel panic|general protection fault|KASAN: |"
    r"soft lockup|rcu: INFO: |self-detected stall|blocked for more than")
QEMU_STOP = re.compile(r"KVM internal error|kvm run failed|emulation failure")
POWERED_OFF = re.compile(r"reboot: Power down")
# Seconds QEMU gets to exit after the guest powered off.
OFF_GRACE = 10


class Qmp:
    """A minimal QMP client: connect, negotiate, ask query-status."""

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.buf = b""

    def connect(self):
        if self.sock:
            return True
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(self.path)
            self.sock = s
            self._read_reply(greeting=True)
            self._call("qmp_capabilities")
            return True
        except OSError:
            s.close()
            self.sock = None
            return False

    def _read_reply(self, greeting=False):
        while True:
            while b"\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise OSError("QMP closed")
                self.buf += data
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if greeting and "QMP" in msg:
                return msg
            if "return" in msg or "error" in msg:
                return msg
            # Events (STOP, RESUME, ...) are not needed: status is polled.

    def _call(self, command):
        self.sock.sendall(json.dumps({"execute": command}).encode() + b"\n")
        return self._read_reply()

    def status(self):
        """The run state, or None when QMP cannot be reached."""
        if not self.connect():
            return None
        try:
            reply = self._call("query-status")
        except OSError:
            self.sock.close()
            self.sock = None
            return None
        return reply.get("return", {}).get("status")


def newest_mtime(top):
    newest = 0.0
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            newest = max(newest, e.stat(follow_symlinks=False).st_mtime)
                    except OSError:
                        pass
        except OSError:
            pass
    return newest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--console", required=True)
    ap.add_argument("--qmp", required=True)
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--stall", type=float, default=240, help="0 disables")
    ap.add_argument("--progress")
    ap.add_argument("--grace", type=float, default=5)
    ap.add_argument("qemu", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.qemu[1:] if a.qemu[:1] == ["--"] else a.qemu
    if not cmd:
        ap.error("no QEMU command")
    # A run started paused on purpose (-S, e.g. for gdb) is not a stopped guest.
    paused_is_stop = "-S" not in cmd
    try:
        os.unlink(a.qmp)
    except FileNotFoundError:
        pass
    cmd = cmd + ["-qmp", f"unix:{a.qmp},server=on,wait=off"]

    log = open(a.console, "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    os.set_blocking(proc.stdout.fileno(), False)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    qmp = Qmp(a.qmp)

    start = last_activity = time.monotonic()
    last_progress = newest_mtime(a.progress) if a.progress else 0.0
    next_poll = start + 1
    paused_polls = 0
    verdict = None          # (kind, reason)
    deadline = None         # when a found kernel report has had its grace
    partial = b""
    exited = None           # when QEMU was seen to have exited
    off = None              # when the guest was seen to power off

    def out(data):
        log.write(data)
        log.flush()
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except OSError:
            pass

    while True:
        now = time.monotonic()
        for key, _ in sel.select(timeout=0.5):
            try:
                data = os.read(key.fileobj.fileno(), 65536)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(key.fileobj)
                continue
            last_activity = time.monotonic()
            out(data)
            partial += data
            *lines, partial = partial.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace").replace("\r", "")
                if verdict or RUNNER_LINE.match(line):
                    continue
                if QEMU_STOP.search(line):
                    verdict = ("stopped", f"QEMU stopped the guest: {line.strip()}")
                    deadline = time.monotonic() + 1
                elif POWERED_OFF.search(line):
                    off = off or time.monotonic()
                elif KERNEL_REPORT.search(line):
                    verdict = ("oops", f"kernel report on the console: {line.strip()}")
                    deadline = time.monotonic() + a.grace
        now = time.monotonic()
        if proc.poll() is not None:
            # QEMU ended: drain its output (a second at most), then stop.
            exited = exited or now
            if not sel.get_map() or now - exited > 1:
                break
            continue
        if deadline is not None and now >= deadline:
            break
        if verdict:
            continue
        if off is not None and now - off >= OFF_GRACE:
            verdict = ("ok", f"the guest powered off; QEMU had not exited {OFF_GRACE}s later "
                       "and was stopped")
            break
        if now >= next_poll:
            next_poll = now + 1
            status = qmp.status()
            if off is not None and status == "shutdown":
                verdict = ("ok", "the guest powered off; QMP said shutdown and QEMU was stopped")
                break
            if status in STOPPED_NOW:
                verdict = ("stopped", f"guest stopped: QEMU status {status}")
                deadline = now + 1
            elif status in ("paused", "prelaunch") and paused_is_stop:
                paused_polls += 1
                if paused_polls >= PAUSED_POLLS:
                    verdict = ("stopped", f"guest stopped: QEMU status {status}")
                    deadline = now
            else:
                paused_polls = 0
            if a.progress and a.stall:
                m = newest_mtime(a.progress)
                if m > last_progress:
                    last_progress = m
                    last_activity = max(last_activity, now)
        if verdict:
            continue
        if a.stall and now - last_activity >= a.stall:
            verdict = ("stall", f"no console output and no test progress for {a.stall:.0f}s")
            break
        if now - start >= a.timeout:
            verdict = ("timeout", f"VM run exceeded its {a.timeout:.0f}s limit")
            break

    rc = proc.poll()
    if rc is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    # Whatever QEMU still had buffered.
    try:
        rest = proc.stdout.read() or b""
    except (OSError, ValueError):
        rest = b""
    if rest:
        out(rest)
    log.close()
    try:
        os.unlink(a.qmp)
    except OSError:
        pass
    if verdict is None:
        verdict = ("ok", f"QEMU exited with status {proc.returncode}")
    with open(a.verdict, "w") as f:
        f.write(f"{verdict[0]}: {verdict[1]}\n")
    if verdict[0] == "ok":
        return proc.returncode if off is None or rc is not None else 0
    return EXIT_CODES[verdict[0]]


if __name__ == "__main__":
    sys.exit(main())
