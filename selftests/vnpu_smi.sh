#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: vnpu-smi against known kernel state: every query field and
# output mode, quota and error decoding, the top view under tmux, --watch
# and bad input. With "--no-devices" it checks the output without the
# module loaded. Runs as root in the test VM from the repository root.
set -u

bin=${VNPU_BIN:-build/bin}
smi=$bin/vnpu-smi
work=${VNPU_WORK:-build/selftests/vnpu_smi_work}
tmp=$(mktemp -d)
pass=0 fail=0 n=0
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

result() { # result 0|1 description
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); echo "not ok $n $2"
	fi
}

# t "description" command...: passes when the command succeeds.
t() {
	local d=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then result 0 "$d"; else
		sed 's/^/# /' "$tmp/out" | head -20
		result 1 "$d"
	fi
}

# eq "description" ACTUAL EXPECTED
eq() {
	if [ "$2" = "$3" ]; then result 0 "$1"; else
		echo "# got:      '$2'"
		echo "# expected: '$3'"
		result 1 "$1"
	fi
}

# Starts a workload holding known memory; waits for "ready PID".
start_hold() { # MIB HOST_KIB SECONDS BUSY -> sets hold_pid
	local f=$tmp/hold.$RANDOM
	"$work" hold "$@" >"$f" 2>&1 &
	pids+=($!)
	hold_pid=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$f" && return 0
		sleep 0.05
	done
	echo "# workload did not start: $(cat "$f")"
	return 1
}

sysv() { cat "/sys/class/accel/accel0/device/vnpu/$1"; }

echo "TAP version 13"

if [ "${1:-}" = "--no-devices" ]; then
	t "no devices: default view says so" \
		bash -c "$smi | grep -q 'No vnpu devices found'"
	t "no devices: query prints only the header" \
		bash -c "[ \"\$($smi --query-device=index,name --format=csv)\" = 'index, name' ]"
	t "no devices: json has an empty device list" \
		bash -c "$smi --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"devices\"]==[]'"
	t "no devices: quota fails with a clear error" \
		bash -c "! $smi quota 1 2>$tmp/e && grep -q 'no vnpu devices' $tmp/e"
	t "no devices: reset fails with a clear error" \
		bash -c "! $smi --reset 0 2>$tmp/e && grep -q 'no vnpu devices' $tmp/e"
	t "no devices: gres fails with a clear error" \
		bash -c "! $smi gres 2>$tmp/e >/dev/null && grep -q 'no vnpu devices' $tmp/e"
	t "no devices: k8s fails with a clear error" \
		bash -c "! $smi k8s 2>$tmp/e >/dev/null && grep -q 'no vnpu devices' $tmp/e"
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ "$fail" = 0 ]
	exit
fi

start_hold 3 64 280 0 || { echo "1..0 # SKIP workload"; exit 1; }
p1=$hold_pid

# --- query mode against known state -------------------------------------------

q() { "$smi" --format=csv,noheader,nounits "$@"; }

t "memory.used matches sysfs" \
	bash -c "[ \"\$($smi --query-device=memory.used --format=csv,noheader,nounits | head -1)\" = \$(( \$(cat /sys/class/accel/accel0/device/vnpu/vram_used_bytes) >> 20 )) ]"
t "memory.total matches sysfs" \
	bash -c "[ \"\$($smi --query-device=memory.total --format=csv,noheader,nounits | head -1)\" = \$(( \$(cat /sys/class/accel/accel0/device/vnpu/vram_total_bytes) >> 20 )) ]"
eq "index, name, engines and health of device 0" \
	"$($smi --query-device=index,name,engines.compute,engines.copy,health,health.verdict --format=csv,noheader | head -1)" \
	"0, vnpu0, $(sysv compute_engines), $(sysv copy_engines), ok, OK"
eq "buffers and clients of device 0" \
	"$($smi --query-device=buffers,clients,processes --format=csv,noheader | head -1)" \
	"$(sysv bo_count), 2, 1"
line=$(q --query-compute-apps=pid,process_name,device,contexts,used_memory,host_memory,quota.used,buffers,quota.soft,quota.hard)
# The runtime keeps one file per device for queries, plus one per context.
eq "compute-apps rows of the workload" "$line" "$p1, vnpu_smi_work, 0, 2, 3, 0, 3, 3, max, max
$p1, vnpu_smi_work, 1, 1, 0, 0, 0, 0, max, max"
t "header carries units" \
	bash -c "[ \"\$($smi --query-compute-apps=pid,used_memory --format=csv | head -1)\" = 'pid, used_memory [MiB]' ]"
t "nounits header has none" \
	bash -c "[ \"\$($smi --query-compute-apps=pid,used_memory --format=csv,nounits | head -1)\" = 'pid, used_memory' ]"
t "units on values" \
	bash -c "$smi --query-compute-apps=used_memory --format=csv,noheader | grep -qx '3 MiB'"

# Every field listed by --help-query is queryable and prints a value.
fields_dev=$("$smi" --help-query | sed -n '/--query-device/,/^$/p' | awk '/^  [a-z]/ {print $1}')
fields_app=$("$smi" --help-query | sed -n '/--query-compute-apps/,/^$/p' | awk '/^  [a-z]/ {print $1}')
bad=0
for f in $fields_dev; do
	v=$(q --query-device="$f" | head -1)
	[ -n "$v" ] || { echo "# device field $f empty"; bad=1; }
done
t "every device field ($(echo $fields_dev | wc -w)) prints a value" [ "$bad" = 0 ]
bad=0
for f in $fields_app; do
	v=$(q --query-compute-apps="$f" | head -1)
	[ -n "$v" ] || { echo "# app field $f empty"; bad=1; }
done
t "every compute-apps field ($(echo $fields_app | wc -w)) prints a value" [ "$bad" = 0 ]
all_dev=$(echo $fields_dev | tr ' ' ',')
t "all device fields at once: one column each" \
	bash -c "[ \$($smi --query-device=$all_dev --format=csv,noheader | head -1 | awk -F', ' '{print NF}') -ge $(echo $fields_dev | wc -w) ]"

# Engine statistics exist from uAPI 1.3; before, they print [N/A].
if [ -d /sys/class/accel/accel0/device/engines ]; then
	t "utilization.compute is a number" \
		bash -c "q=\$($smi --query-device=utilization.compute --format=csv,noheader,nounits | head -1); [ \"\$q\" -ge 0 ]"
else
	t "utilization without engine stats prints [N/A]" \
		bash -c "[ \"\$($smi --query-device=utilization.compute,reset_count --format=csv,noheader | head -1)\" = '[N/A], [N/A]' ]"
fi

# --- default view, json, prometheus, loop ---------------------------------------

"$smi" >"$tmp/d"
sed 's/^/# /' "$tmp/d"
t "default view lists device, health verdict and the process" \
	bash -c "grep -q '^0 *vnpu0 *ok' $tmp/d && grep -q 'vnpu0 *OK *healthy' $tmp/d && grep -q \"^ *$p1 *vnpu_smi_work *0 *2 *3.0 MiB\" $tmp/d"
t "json parses and matches the kernel" \
	python3 -c "
import json, subprocess
d = json.loads(subprocess.check_output(['$smi', '--json']))
dev = d['devices'][0]
assert dev['vram_used_bytes'] == int(open('/sys/class/accel/accel0/device/vnpu/vram_used_bytes').read())
p = [x for x in d['processes'] if x['pid'] == $p1][0]
assert p['vram_bytes'] == 3 << 20 and p['quota']['buffers'] == 3, p
assert p['host_bytes'] == 64 << 10, p
"
t "prometheus exposition is well-formed" \
	bash -c "$smi --prometheus >$tmp/p && grep -q '^vnpu_memory_used_bytes{device=\"0\"} $(sysv vram_used_bytes)$' $tmp/p && grep -q '^vnpu_process_memory_bytes{device=\"0\",pid=\"$p1\",comm=\"vnpu_smi_work\",region=\"vram\"} 3145728$' $tmp/p && ! grep -vE '^(# (HELP|TYPE) [a-z_]+ .*|[a-z_]+\{[^}]*\} [0-9.e+-]+)$' $tmp/p"
t "-l repeats the output" \
	bash -c "timeout 2.5 $smi --query-device=index --format=csv,noheader -l 1 >$tmp/l; [ \$(grep -c '^0$' $tmp/l) -ge 2 ]"

# --- quota, error, reset ---------------------------------------------------------

t "quota get of the workload" \
	bash -c "$smi quota $p1 | grep -q \"pid $p1 on vnpu0: soft max, hard max, used 3.0 MiB.*3 buffers\""
eq "quota set soft limit" "$($smi quota $p1 --soft 8M 2>&1)" \
	"pid $p1 on vnpu0: soft 8.0 MiB, hard max, used 3.0 MiB, peak 3.0 MiB, 3 buffers, host 65536 bytes"
eq "quota.soft shows it" "$($smi --query-compute-apps=quota.soft --format=csv,noheader,nounits | head -1)" 8
t "quota soft above hard is refused" \
	bash -c "$smi quota $p1 --hard 4M --soft 16M 2>$tmp/e; [ \$? = 1 ] && grep -q 'may not exceed' $tmp/e"
t "quota of a vanished pid: clear error" \
	bash -c "sleep 0 & p=\$!; wait \$p; ! $smi quota \$p 2>$tmp/e && grep -q 'no such process' $tmp/e"
t "quota bad size" bash -c "! $smi quota $p1 --soft 12Q 2>/dev/null; [ \$? = 0 ]"
t "error decodes a runtime status" \
	bash -c "$smi error 204 | grep -q 'VNPU_ERROR_QUOTA_EXCEEDED'"
t "error decodes a kernel errno" \
	bash -c "$smi error -122 | grep -q 'EDQUOT.*soft limit'"
t "error decodes a name" bash -c "$smi error ETIMEDOUT | grep -q 'timeout'"
t "error rejects garbage" bash -c "! $smi error nonsense 2>/dev/null"
if [ -e /sys/class/accel/accel0/device/vnpu/reset ]; then
	t "reset as root" bash -c "$smi --reset 0 | grep -q 'vnpu0 reset; health ok'"
	t "reset needs root" bash -c "! setpriv --reuid=65534 --regid=65534 --clear-groups $smi --reset 0 2>$tmp/e && grep -q 'needs root' $tmp/e"
else
	t "reset without driver support: clear error" \
		bash -c "! $smi --reset 0 2>$tmp/e && grep -q 'needs uAPI 1.3' $tmp/e"
fi
t "reset of a missing device" bash -c "! $smi --reset 9 2>$tmp/e && grep -q 'no device 9' $tmp/e"

# --- bad input -----------------------------------------------------------------

t "unknown field" bash -c "$smi --query-device=index,bogus --format=csv 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown field 'bogus'\" $tmp/e"
t "unknown app field" bash -c "$smi --query-compute-apps=pid,nope --format=csv 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown field 'nope'\" $tmp/e"
t "malformed format" bash -c "$smi --query-device=index --format=csv,wide 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown format option 'wide'\" $tmp/e"
t "format without csv" bash -c "$smi --query-device=index --format=noheader 2>$tmp/e; [ \$? = 2 ] && grep -q 'must include csv' $tmp/e"
t "query without format" bash -c "$smi --query-device=index 2>$tmp/e; [ \$? = 2 ] && grep -q 'needs --format' $tmp/e"
t "empty field list" bash -c "$smi --query-device= --format=csv 2>/dev/null; [ \$? = 2 ]"
t "bad loop interval" bash -c "$smi -l abc 2>/dev/null; [ \$? = 2 ]"
t "watch of a missing pid" bash -c "$smi --watch 999999 2>$tmp/e; [ \$? = 1 ] && grep -q 'no process' $tmp/e"

# PIDs that come and go while vnpu-smi reads /proc never break it.
(for _ in $(seq 8); do "$work" hold 1 0 0 >/dev/null 2>&1; done) &
churn=$!
bad=0
for _ in $(seq 8); do
	"$smi" --json >"$tmp/j" 2>"$tmp/e" || bad=1
	python3 -c "import json; json.load(open('$tmp/j'))" || bad=1
	[ -s "$tmp/e" ] && bad=1
done
wait $churn
t "short-lived clients while scanning: valid output, no errors" [ "$bad" = 0 ]

# --- watch ---------------------------------------------------------------------

t "watch samples with timestamps, stops at count" \
	bash -c "$smi --watch $p1 -i 0.1 -c 4 >$tmp/w && [ \$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} +3 +- +- +3 +3211264$' $tmp/w) = 4 ] && grep -q 'no growth' $tmp/w"
start_hold 1 0 3 0
t "watch of a process that exits mid-watch" \
	bash -c "$smi --watch $hold_pid -i 0.2 -c 50 >$tmp/w; grep -q 'pid $hold_pid exited' $tmp/w"

# --- top under tmux -------------------------------------------------------------

if command -v tmux >/dev/null; then
	export TERM=xterm
	sock=$tmp/tmux.sock
	tmux -S "$sock" new-session -d -x 160 -y 40 "$smi top -i 0.5"
	sleep 2
	tmux -S "$sock" capture-pane -p >"$tmp/top" 2>/dev/null
	t "top shows the device with bars" \
		bash -c "grep -q '^vnpu0 *ok *MEM \[' $tmp/top && grep -q 'COMPUTE \[' $tmp/top"
	t "top shows the process row" grep -q "^$p1 *vnpu_smi_work *3.0 MiB" "$tmp/top"
	tmux -S "$sock" send-keys q
	sleep 1
	t "top quits on q" bash -c "! tmux -S $sock has-session 2>/dev/null"
	tmux -S "$sock" kill-server 2>/dev/null
else
	echo "# tmux missing"
	result 1 "top under tmux"
fi

kill "$p1" 2>/dev/null
wait "$p1" 2>/dev/null

# --- VNPU_TRACE of a known workload --------------------------------------------

trace=${VNPU_OUT:-$tmp}/trace.json
el=$(VNPU_TRACE=$trace "$work" trace | sed -n 's/^elapsed //p')
t "trace is valid JSON" python3 -c "import json; json.load(open('$trace'))"
t "vnpu-trace check: slices nest, flows match" "$bin/vnpu-trace" check "$trace"
t "trace structure and timestamps agree with the events" python3 -c "
import json
ev = json.load(open('$trace'))['traceEvents']
names = {e['tid']: e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
streams = [t for t, n in names.items() if n.startswith('stream')]
assert len(streams) == 2, names
dev = [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'device']
api = [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'api']
assert any(e['name'] == 'vnpu_stream_synchronize' for e in api)
assert len([e for e in ev if e['ph'] == 's']) >= len(dev) == len([e for e in ev if e['ph'] == 'f'])
assert any(e['ph'] == 'C' and e['name'] == 'memory' for e in ev)
comp = sorted([e for e in dev if 'compute' in names[e['tid']] and e['args']['point'] <= 3], key=lambda e: e['ts'])
a, d, b = comp[0], comp[1], comp[2]
assert [a['name'], d['name'], b['name']] == ['vnpu_event_record', 'vnpu_launch_delay', 'vnpu_event_record'], comp
el = $el / 1000.0
assert 20000 <= d['dur'] <= el + 5, (d['dur'], el)
assert abs((b['ts'] - (a['ts'] + a['dur'])) - el) < 500, (a, b, el)
for e in dev: assert e['args']['queue_wait_us'] >= 0
"
"$bin/vnpu-trace" summary "$trace" >"$tmp/sum"
sed 's/^/# /' "$tmp/sum"
t "vnpu-trace summary: streams, waits, longest, utilization" \
	bash -c "grep -q '^stream .*compute' $tmp/sum && grep -q 'longest operations' $tmp/sum && grep -q '^ *2[0-9].[0-9]* ms *vnpu_launch_delay' $tmp/sum && grep -q '^  compute' $tmp/sum"
head -c $(( $(stat -c %s "$trace") * 2 / 3 )) "$trace" >"$tmp/cut.json"
t "truncated trace: summary still works and says so" \
	bash -c "$bin/vnpu-trace summary $tmp/cut.json | grep -q 'cut short'"
t "truncated trace: repair gives valid JSON" \
	bash -c "$bin/vnpu-trace repair $tmp/cut.json $tmp/fixed.json 2>/dev/null && python3 -c \"import json; json.load(open('$tmp/fixed.json'))\" && $bin/vnpu-trace check $tmp/fixed.json"
t "trace of a killed process: repairable" bash -c "
	VNPU_TRACE=$tmp/k.json $work hold 1 0 30 1 >$tmp/kout & k=\$!
	sleep 1.5; kill -9 \$k; wait \$k
	$bin/vnpu-trace repair $tmp/k.json $tmp/kf.json 2>/dev/null && python3 -c \"import json; json.load(open('$tmp/kf.json'))\""
t "not a trace file: clear error" bash -c "! $bin/vnpu-trace summary /etc/passwd 2>&1 | grep -q 'not a VNPU_TRACE file'; [ \${PIPESTATUS[0]} != 0 ]"

# --- cluster integration snippets ------------------------------------------------

vnpu_nodes=$(for d in /sys/class/accel/accel*; do
	[ -e "$d/device/vnpu/index" ] && echo "/dev/accel/${d##*/}"; done | sort)
ndev=$(echo "$vnpu_nodes" | wc -l)
"$smi" gres >"$tmp/gres"
sed 's/^/# /' "$tmp/gres"
t "gres: slurm.conf note counts every device" grep -q "Gres=vnpu:$ndev\$" "$tmp/gres"
t "gres: cgroup device constraint noted" grep -q '^# cgroup.conf: ConstrainDevices=yes' "$tmp/gres"
# Expand File=/dev/accel/accel[0-1,3] (or one line per device) into node paths.
gres_files=$(python3 -c '
import re, sys
for line in open(sys.argv[1]):
    if not line.startswith("NodeName="):
        continue
    f = re.search(r"File=(\S+)", line).group(1)
    m = re.match(r"(.*)\[(.*)\]$", f)
    if not m:
        print(f)
        continue
    for part in m.group(2).split(","):
        a, _, b = part.partition("-")
        for i in range(int(a), int(b or a) + 1):
            print(m.group(1) + str(i))
' "$tmp/gres" | sort)
eq "gres: File= names exactly the vnpu device nodes" "$gres_files" "$vnpu_nodes"
if [ -e /sys/class/accel/accel0/device/vnpu/link_class ]; then
	t "gres: topology gives Links= per device" bash -c "[ \$(grep -c ' Links=' $tmp/gres) = $ndev ]"
fi
"$smi" k8s >"$tmp/k8s"
sed 's/^/# /' "$tmp/k8s"
eq "k8s: one group per vnpu device node" \
	"$(sed -n 's/^ *- path: //p' "$tmp/k8s" | sort)" "$vnpu_nodes"
t "k8s: resource named vnpu under devices:" \
	bash -c "grep -q '^devices:' $tmp/k8s && grep -q '^  - name: vnpu' $tmp/k8s"

# --- the leak example ----------------------------------------------------------

leaky=${VNPU_EXAMPLES:-build/examples}/leaky
VNPU_LEAK_REPORT=1 "$leaky" 24 150 >"$tmp/leaky.out" 2>"$tmp/leaky.err" &
lp=$!
sleep 0.3
"$smi" --watch $lp -i 0.4 -c 9 >"$tmp/watch" 2>&1
wait $lp
sed 's/^/# /' "$tmp/watch" "$tmp/leaky.err" | head -40
t "watch flags the leaking buffers" grep -q 'LEAK? buffers grew' "$tmp/watch"
t "leak report at finalize names the call site" grep -q 'handle_request\|leaky' "$tmp/leaky.err"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
