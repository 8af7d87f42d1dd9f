#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: vnpu-smi against known kernel state: every query field and
# output mode, quota and error decoding, the top view under tmux, --watch
# and bad input. With "--no-devices" it checks the output without the
# module loaded; "main", "input", "watch" or "trace" runs one part
# (queries and views; bad input and the top view; the leak monitor and
# example; VNPU_TRACE and vnpu-trace), no argument all. Runs as root in the test VM from the repository root.
set -u

bin=${VNPU_BIN:-build/bin}
smi=$bin/vnpu-smi
work=${VNPU_WORK:-build/selftests/vnpu_smi_work}
# The tests kill their workloads; this only bounds a stray one. Generous,
# because a debug kernel runs the queries many times slower.
work_bound=3600
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

# wait_lines FILE REGEX COUNT: until FILE has COUNT lines matching the
# extended REGEX; gives up after 60 s.
wait_lines() {
	for _ in $(seq 1200); do
		[ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.05
	done
	echo "# waited in vain for $3 lines '$2' in $1: $(tail -3 "$1")"
	return 1
}

# Starts a workload (vnpu_smi_work MODE ARGS...); waits for "ready PID".
# Sets work_pid, and work_out to its output file.
start_work() {
	work_out=$tmp/work.$RANDOM
	"$work" "$@" >"$work_out" 2>&1 &
	pids+=($!)
	work_pid=$!
	wait_lines "$work_out" '^ready' 1
}

# A workload holding known memory.
start_hold() { # MIB HOST_KIB SECONDS BUSY -> sets hold_pid
	start_work hold "$@"
	local rc=$?
	hold_pid=$work_pid
	return $rc
}

q() { "$smi" --format=csv,noheader,nounits "$@"; }

# The counts of one --watch sample: contexts queues syncobjs buffers bytes.
watch_counts() {
	"$smi" --watch "$1" -c 1 | awk '/^[0-9][0-9]:/ {print $2, $3, $4, $5, $6}'
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
	t "no devices: topo says so" \
		bash -c "$smi topo | grep -q 'No vnpu devices found'"
	t "no devices: gres fails with a clear error" \
		bash -c "! $smi gres 2>$tmp/e >/dev/null && grep -q 'no vnpu devices' $tmp/e"
	t "no devices: k8s fails with a clear error" \
		bash -c "! $smi k8s 2>$tmp/e >/dev/null && grep -q 'no vnpu devices' $tmp/e"
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ "$fail" = 0 ]
	exit
fi

section=${1:-all}
case $section in
all | main | input | watch | trace) ;;
*) echo "usage: $0 [--no-devices | main | input | watch | trace]" >&2; exit 2 ;;
esac
want() { [ "$section" = all ] || [ "$section" = "$1" ]; }

start_hold 3 64 "$work_bound" 0 || { echo "1..0 # SKIP workload"; exit 1; }
p1=$hold_pid

if want main; then
# --- query mode against known state -------------------------------------------


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
	v=$(q --sample 0 --query-device="$f" | head -1)
	[ -n "$v" ] || { echo "# device field $f empty"; bad=1; }
done
t "every device field ($(echo $fields_dev | wc -w)) prints a value" [ "$bad" = 0 ]
bad=0
for f in $fields_app; do
	v=$(q --sample 0 --query-compute-apps="$f" | head -1)
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
"$smi" --query-device=index --format=csv,noheader -l 1 >"$tmp/l" &
loop_pid=$!
wait_lines "$tmp/l" '^0$' 2
kill "$loop_pid"
wait "$loop_pid"
t "-l repeats the output" [ "$(grep -c '^0$' "$tmp/l")" -ge 2 ]

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

fi

if want input; then
# --- bad input -----------------------------------------------------------------

t "unknown field" bash -c "$smi --query-device=index,bogus --format=csv 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown field 'bogus'\" $tmp/e"
t "unknown app field" bash -c "$smi --query-compute-apps=pid,nope --format=csv 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown field 'nope'\" $tmp/e"
t "malformed format" bash -c "$smi --query-device=index --format=csv,wide 2>$tmp/e; [ \$? = 2 ] && grep -q \"unknown format option 'wide'\" $tmp/e"
t "format without csv" bash -c "$smi --query-device=index --format=noheader 2>$tmp/e; [ \$? = 2 ] && grep -q 'must include csv' $tmp/e"
t "query without format" bash -c "$smi --query-device=index 2>$tmp/e; [ \$? = 2 ] && grep -q 'needs --format' $tmp/e"
t "empty field list" bash -c "$smi --query-device= --format=csv 2>/dev/null; [ \$? = 2 ]"
t "bad loop interval" bash -c "$smi -l abc 2>/dev/null; [ \$? = 2 ]"
t "watch of a missing pid" bash -c "$smi --watch 999999 2>$tmp/e; [ \$? = 1 ] && grep -q 'no process' $tmp/e"
t "watch of a malformed pid" bash -c "$smi --watch 12x 2>$tmp/e; [ \$? = 2 ] && grep -q \"bad pid '12x'\" $tmp/e"
t "watch with a bad count" bash -c "$smi --watch 1 -c 0 2>$tmp/e; [ \$? = 2 ] && grep -q 'bad number' $tmp/e"
t "bad sample window" bash -c "$smi --sample 99999 2>$tmp/e; [ \$? = 2 ] && grep -q 'bad milliseconds' $tmp/e"
t "unknown option: usage, status 2" bash -c "$smi --frobnicate 2>$tmp/e; [ \$? = 2 ] && grep -q 'usage' $tmp/e"

# PIDs that come and go while vnpu-smi reads /proc never break it, nor do
# device files a process opens and closes back to back.
(for _ in $(seq 8); do "$work" hold 1 0 0 >/dev/null 2>&1; done) &
churn=$!
start_work churn "$work_bound"
fchurn=$work_pid
"$smi" --watch "$fchurn" -i 0.05 -c 10 >"$tmp/wc" 2>&1 &
wc_pid=$!
bad=0
for _ in $(seq 4); do
	"$smi" --json >"$tmp/j" 2>"$tmp/e" || { echo "# --json failed"; bad=1; }
	python3 -c "import json; json.load(open('$tmp/j'))" || bad=1
	[ -s "$tmp/e" ] && { sed 's/^/# /' "$tmp/e"; bad=1; }
	"$smi" --query-compute-apps=pid,contexts,queues,syncobjs,handles --format=csv \
		>/dev/null 2>"$tmp/e" || { echo "# query failed"; bad=1; }
	[ -s "$tmp/e" ] && { sed 's/^/# /' "$tmp/e"; bad=1; }
done
wait "$wc_pid" || { echo "# watch failed"; bad=1; }
[ "$(grep -cE '^[0-9]{2}:' "$tmp/wc")" = 10 ] || { sed 's/^/# /' "$tmp/wc"; bad=1; }
kill -TERM "$fchurn"
wait "$fchurn" || { echo "# churn workload: $(cat "$work_out")"; bad=1; }
wait $churn
t "short-lived clients and files while scanning: valid output, no errors" [ "$bad" = 0 ]

fi

if want watch; then
# --- watch ---------------------------------------------------------------------

t "watch samples with timestamps, stops at count" \
	bash -c "$smi --watch $p1 -i 0.1 -c 4 >$tmp/w && [ \$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} +3 +[0-9]+ +[0-9]+ +[0-9]+ +3211264$' $tmp/w) = 4 ] && grep -q 'no growth' $tmp/w"
start_hold 1 0 "$work_bound" 0
"$smi" --watch "$hold_pid" -i 0.2 -c 1000 >"$tmp/w" 2>&1 &
watch_pid=$!
wait_lines "$tmp/w" '^[0-9]{2}:' 1
kill "$hold_pid"
wait "$watch_pid"
t "watch of a process that exits mid-watch" grep -q "pid $hold_pid exited" "$tmp/w"

# Kernel counts of known objects: a process with one more context, three
# more streams (a queue and a syncobj each), four more events (a syncobj
# each) and five more 64 KiB buffers than a baseline process shows exactly
# that many more of each, in --watch and in the query fields.
start_work objects 1 0 0 0 "$work_bound" && base_pid=$work_pid
start_work objects 2 3 4 5 "$work_bound" && more_pid=$work_pid
read -r bc bq bs bb by <<<"$(watch_counts "$base_pid")"
read -r mc mq ms mb my <<<"$(watch_counts "$more_pid")"
echo "# watch baseline: $bc $bq $bs $bb $by; with the objects: $mc $mq $ms $mb $my"
eq "watch: contexts, queues, syncobjs, buffers, bytes of known objects" \
	"$((mc - bc)) $((mq - bq)) $((ms - bs)) $((mb - bb)) $((my - by))" "1 3 7 5 327680"
app_counts() {
	q --query-compute-apps=pid,device,contexts,queues,syncobjs,handles |
		awk -F', ' -v p="$1" '$1 == p && $2 == 0 {print $3, $4, $5, $6}'
}
read -r bc bq bs bb <<<"$(app_counts "$base_pid")"
read -r mc mq ms mb <<<"$(app_counts "$more_pid")"
eq "query fields contexts, queues, syncobjs, handles of known objects" \
	"$((mc - bc)) $((mq - bq)) $((ms - bs)) $((mb - bb))" "1 3 7 5"
t "json carries queues, syncobjs and handles" python3 -c "
import json, subprocess
d = json.loads(subprocess.check_output(['$smi', '--json']))
p = [x for x in d['processes'] if x['pid'] == $more_pid and x['device'] == 0][0]
b = [x for x in d['processes'] if x['pid'] == $base_pid and x['device'] == 0][0]
assert (p['queues'] - b['queues'], p['syncobjs'] - b['syncobjs'], p['handles'] - b['handles']) == (3, 7, 5), (p, b)
"
t "fdinfo has the vnpu- counts" bash -c "cat /proc/$more_pid/fdinfo/* | grep -q '^vnpu-queues:' && cat /proc/$more_pid/fdinfo/* | grep -q '^vnpu-syncobjs:' && cat /proc/$more_pid/fdinfo/* | grep -q '^vnpu-buffers:'"
kill "$base_pid" "$more_pid" 2>/dev/null

# Growth of every count is flagged; growth that returns to the baseline is
# not. On SIGUSR1 the workload opens three contexts, each with a stream, an
# event and a buffer; on SIGUSR2 it destroys them. The watch is stopped once
# the second half of its samples all come after the last change.
start_work grow 3 "$work_bound"
grow_pid=$work_pid grow_out=$work_out
watch_phase() { # OUT RELEASE: one growth, then a release if RELEASE=1
	local n wp
	"$smi" --watch "$grow_pid" -i 0.3 >"$1" 2>&1 &
	wp=$!
	wait_lines "$1" '^[0-9]{2}:' 1
	kill -USR1 "$grow_pid"
	wait_lines "$grow_out" '^grown' "$((++grown))"
	if [ "$2" = 1 ]; then
		kill -USR2 "$grow_pid"
		wait_lines "$grow_out" '^released' "$((++released))"
	fi
	n=$(grep -cE '^[0-9]{2}:' "$1")
	wait_lines "$1" '^[0-9]{2}:' "$((2 * n + 1))"
	kill -TERM "$wp"
	wait "$wp"
	sed 's/^/# /' "$1" | tail -7
}
grown=0 released=0
watch_phase "$tmp/grow" 0
for c in contexts queues syncobjs buffers bytes; do
	t "watch flags growing $c" grep -q "^LEAK? $c grew" "$tmp/grow"
done
eq "watch: the growth is the workload's objects" \
	"$(grep -m1 "^LEAK? queues" "$tmp/grow" | awk '{print $7 - $5}') $(grep -m1 "^LEAK? syncobjs" "$tmp/grow" | awk '{print $7 - $5}')" "3 6"
kill -USR2 "$grow_pid"
wait_lines "$grow_out" '^released' "$((++released))"
watch_phase "$tmp/back" 1
t "watch: growth back to the baseline is not flagged" \
	bash -c "grep -q '^no growth above the baseline' $tmp/back && ! grep -q '^LEAK?' $tmp/back"
kill "$grow_pid" 2>/dev/null

fi

if want input; then
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

fi
kill "$p1" 2>/dev/null
wait "$p1" 2>/dev/null

if want trace; then
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
t "trace: every API call of the workload is a host slice" python3 -c "
import json
ev = json.load(open('$trace'))['traceEvents']
api = {e['name'] for e in ev if e['ph'] == 'X' and e.get('cat') == 'api'}
want = {'vnpu_ctx_create', 'vnpu_ctx_destroy', 'vnpu_stream_create', 'vnpu_stream_destroy',
	'vnpu_malloc', 'vnpu_free', 'vnpu_memcpy_htod_async', 'vnpu_memset_d32_async',
	'vnpu_launch_delay', 'vnpu_launch_kernel', 'vnpu_event_create', 'vnpu_event_record',
	'vnpu_event_destroy', 'vnpu_stream_synchronize', 'vnpu_malloc_async', 'vnpu_free_async'}
assert want <= api, sorted(want - api)
"
t "trace: submits nest in their API call, flows link submit to execution" python3 -c "
import json
ev = json.load(open('$trace'))['traceEvents']
ns = lambda us: round(us * 1000)
x = [e for e in ev if e['ph'] == 'X']
api = [e for e in x if e.get('cat') == 'api']
sub = [e for e in x if e.get('cat') == 'submit']
dev = [e for e in x if e.get('cat') == 'device']
assert sub and dev
def inside(c, p):
	return p is not c and p['tid'] == c['tid'] and ns(p['ts']) <= ns(c['ts']) and ns(c['ts'] + c['dur']) <= ns(p['ts'] + p['dur'])
# Each submit lies in the API slice of the call that made its job.
for s in sub:
	parents = [p for p in api if inside(s, p)]
	assert parents, s
	assert s['args']['op'] in [p['name'] for p in parents], (s, parents)
# API slices of a thread nest: any two are disjoint or one holds the other.
by_tid = {}
for e in api + sub:
	by_tid.setdefault(e['tid'], []).append(e)
for t, es in by_tid.items():
	for i, p in enumerate(es):
		for c in es[i + 1:]:
			a0, a1, b0, b1 = ns(p['ts']), ns(p['ts'] + p['dur']), ns(c['ts']), ns(c['ts'] + c['dur'])
			assert a1 <= b0 or b1 <= a0 or (a0 <= b0 and b1 <= a1) or (b0 <= a0 and a1 <= b1), (p, c)
# Each flow starts at a submit of the host thread and ends where a job starts on a stream.
starts = {e['id']: e for e in ev if e['ph'] == 's'}
for f in [e for e in ev if e['ph'] == 'f']:
	s = starts[f['id']]
	assert any(ns(u['ts']) == ns(s['ts']) and u['tid'] == s['tid'] for u in sub), s
	j = [d for d in dev if d['tid'] == f['tid'] and ns(d['ts']) == ns(f['ts'])]
	assert j and ns(j[0]['args']['submit_us']) == ns(s['ts']), (f, j)
"
t "trace: memory counter follows allocations" python3 -c "
import json
ev = json.load(open('$trace'))['traceEvents']
c = [e for e in ev if e['ph'] == 'C' and e['name'] == 'memory']
api = [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'api']
m = [e for e in api if e['name'] == 'vnpu_malloc'][0]
f = [e for e in api if e['name'] == 'vnpu_free'][-1]
ns = lambda us: round(us * 1000)
during = lambda s: [e['args']['vram_bytes'] for e in c if ns(s['ts']) <= ns(e['ts']) <= ns(s['ts'] + s['dur'])]
before = lambda s: ([0] + [e['args']['vram_bytes'] for e in c if ns(e['ts']) < ns(s['ts'])])[-1]
assert during(m) and during(m)[-1] == before(m) + 16384, (during(m), before(m))
assert during(f) and during(f)[-1] == before(f) - 16384, (during(f), before(f))
"
"$bin/vnpu-trace" summary "$trace" >"$tmp/sum"
sed 's/^/# /' "$tmp/sum"
t "vnpu-trace summary: streams, waits, longest, utilization" \
	bash -c "grep -q '^stream .*compute' $tmp/sum && grep -A1 'longest operations' $tmp/sum | tail -1 | awk '\$1 >= 20 && \$3 == \"vnpu_launch_delay\" {ok = 1} END {exit !ok}' && grep -q '^  compute' $tmp/sum"
head -c $(( $(stat -c %s "$trace") * 2 / 3 )) "$trace" >"$tmp/cut.json"
t "truncated trace: summary still works and says so" \
	bash -c "$bin/vnpu-trace summary $tmp/cut.json | grep -q 'cut short'"
t "truncated trace: repair gives valid JSON" \
	bash -c "$bin/vnpu-trace repair $tmp/cut.json $tmp/fixed.json 2>/dev/null && python3 -c \"import json; json.load(open('$tmp/fixed.json'))\" && $bin/vnpu-trace check $tmp/fixed.json"
t "trace of a killed process: repairable" bash -c "
	VNPU_TRACE=$tmp/k.json $work hold 1 0 30 1 >$tmp/kout & k=\$!
	sleep 1.5; kill -9 \$k; wait \$k
	$bin/vnpu-trace repair $tmp/k.json $tmp/kf.json 2>/dev/null && python3 -c \"import json; json.load(open('$tmp/kf.json'))\""
t "trace cut right after its header: repaired, checks clean" bash -c "
	head -1 $trace >$tmp/h.json
	$bin/vnpu-trace repair $tmp/h.json $tmp/hf.json 2>/dev/null && python3 -c \"import json; json.load(open('$tmp/hf.json'))\" &&
	$bin/vnpu-trace summary $tmp/h.json | grep -q 'no device work' && $bin/vnpu-trace check $tmp/hf.json"
t "empty trace file: clear error" bash -c ": >$tmp/empty.json; ! $bin/vnpu-trace summary $tmp/empty.json 2>$tmp/e && grep -q 'not a VNPU_TRACE file' $tmp/e"
t "missing trace file: clear error" bash -c "! $bin/vnpu-trace summary $tmp/none.json 2>$tmp/e && grep -q 'No such file' $tmp/e"
t "vnpu-trace bad usage: status 2" bash -c "$bin/vnpu-trace frobnicate x 2>$tmp/e; [ \$? = 2 ] && grep -q usage $tmp/e"
t "not a trace file: clear error" bash -c "! $bin/vnpu-trace summary /etc/passwd 2>$tmp/e && grep -q 'not a VNPU_TRACE file' $tmp/e"

fi

if want main; then
# --- topo ----------------------------------------------------------------------

# Each device's row has X on the diagonal and the class sysfs gives for the
# others; the legend carries the bandwidth and latency sysfs gives.
"$smi" topo >"$tmp/topo" 2>&1
sed 's/^/# /' "$tmp/topo"
short() { case $1 in self) echo X ;; board) echo BRD ;; node) echo NODE ;; system) echo SYS ;; esac; }
bad=0
for d in /sys/class/accel/accel*/device/vnpu; do
	i=$(cat "$d/index")
	want="vnpu$i"
	for c in $(cat "$d/link_class"); do want="$want $(short "$c")"; done
	got=$(grep "^vnpu$i " "$tmp/topo" | awk -v n="$(wc -w <"$d/link_class")" '{ s=$1; for (j = 2; j <= n + 1; j++) s = s " " $j; print s }')
	[ "$got" = "$want" ] || { echo "# row $i: got '$got', want '$want'"; bad=1; }
done
eq "topo rows are the sysfs link classes" "$bad" 0
eq "topo legend has the board link as configured" \
	"$(grep -o 'BRD  = .*' "$tmp/topo")" \
	"BRD  = Connection on the same board (switch): $(cut -d, -f1 /sys/module/vnpu/parameters/link_bandwidth_mbps) MB/s, $(cut -d, -f1 /sys/module/vnpu/parameters/link_latency_ns) ns"
t "topo -m is the same matrix" bash -c "$smi topo -m | cmp -s - $tmp/topo"
t "topo with a bad argument: usage, exit 2" \
	bash -c "$smi topo --bogus 2>$tmp/e; [ \$? = 2 ] && grep -q 'usage: vnpu-smi topo' $tmp/e"

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

fi

if want watch; then
# --- the leak example ----------------------------------------------------------

leaky=${VNPU_EXAMPLES:-build/examples}/leaky
VNPU_LEAK_REPORT=1 "$leaky" 40 150 >"$tmp/leaky.out" 2>"$tmp/leaky.err" &
lp=$!
wait_lines "$tmp/leaky.out" '^leaky: pid' 1
"$smi" --watch $lp -i 0.4 -c 9 >"$tmp/watch" 2>&1
wait $lp
sed 's/^/# /' "$tmp/watch" "$tmp/leaky.err" | head -40
t "watch flags the leaking buffers" grep -q 'LEAK? buffers grew' "$tmp/watch"
t "leak report at finalize names the call site" grep -q 'handle_request\|leaky' "$tmp/leaky.err"

fi
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
