#!/bin/sh
# packaging/migrate-legacy-args (what the .deb's postinst and the RPM's %post run): the old
# exporter's flags carried into the shim's defaults file, in a temporary root (ROOT=...).
# One behaviour per case. The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
SCRIPT=packaging/migrate-legacy-args
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_migrate.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# fresh: a new root with the shim's defaults file as the package ships it
fresh() {
	r=$tmp/root
	rm -rf "$r"
	mkdir -p "$r/etc/default" "$r/etc/sysconfig" "$r/etc/systemd/system" "$r/usr/share/slurm-exporter-shim"
	cp packaging/default/slurm-exporter-shim "$r/etc/default/slurm-exporter-shim"
	cp packaging/default/slurm-exporter-shim "$r/usr/share/slurm-exporter-shim/default.dist"
}
run() { ROOT=$tmp/root sh "$SCRIPT" "$@" >"$tmp/out" 2>&1; }
args() { sed -n 's/^ARGS=//p' "$tmp/root/etc/default/slurm-exporter-shim"; }
# expect NAME WANT: the defaults file's ARGS= value is WANT (with its quotes)
expect() {
	got=$(args)
	if [ "$got" = "$2" ]; then ok "$1: ARGS=$2"; else bad "$1: ARGS=$got, want $2"; sed 's/^/       | /' "$tmp/out"; fi
}
# shim_schema NAME: the shim takes the carried ARGS (the schemas' /etc path read from mappings/) and
# serves NAME at the metrics path
shim_schema() {
	a=$(args | tr -d '"' | sed 's#/etc/slurm-exporter-shim/#mappings/#g')
	# shellcheck disable=SC2086
	if "${SHIM_BIN:-./slurm-exporter-shim}" $a --version >"$tmp/ver" 2>&1 &&
		grep -q "schema: *$1 (mappings/$1.json, at the metrics path)" "$tmp/ver" &&
		[ "$(grep -c 'schema:' "$tmp/ver")" = 1 ]; then
		ok "the shim accepts the carried ARGS and serves the $1 schema only"
	else
		bad "the shim with ARGS $a: not the $1 schema alone"
		sed 's/^/       | /' "$tmp/ver"
	fi
}
# once_with: the shim runs once with the carried ARGS on a captured state (a bad --mapping.exclude
# fails it), its output in $tmp/once
once_with() {
	a=$(args | tr -d '"' | sed 's#/etc/slurm-exporter-shim/#mappings/#g')
	set -f
	# shellcheck disable=SC2086
	"${SHIM_BIN:-./slurm-exporter-shim}" $a --once --replay-dir tests/fixtures/peers-25.11/P1-busy-mix >"$tmp/once" 2>"$tmp/once.err"
	rc=$?
	set +f
	return $rc
}
said() {
	if grep -q -- "$2" "$tmp/out"; then ok "$1: says '$2'"; else bad "$1: does not say '$2'"; sed 's/^/       | /' "$tmp/out"; fi
}

fresh
echo 'ARGS="-gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
run
expect "vpenso ARGS -gpus-acct" '"--gpus-acct"'
said "vpenso ARGS -gpus-acct" 'carried over into /etc/default/slurm-exporter-shim: ARGS="--gpus-acct"'
grep -q '^# Carried over by the package on .* from /etc/default/prometheus-slurm-exporter (ARGS)' \
	"$tmp/root/etc/default/slurm-exporter-shim" && ok "the defaults file says where ARGS came from" ||
	bad "no comment naming the old file above ARGS="
[ "$(grep -c '^ARGS=' "$tmp/root/etc/default/slurm-exporter-shim")" = 1 ] && ok "one ARGS= line" || bad "not one ARGS= line"
"${SHIM_BIN:-./slurm-exporter-shim}" $(args | tr -d '"') --version >/dev/null 2>&1 && ok "the shim accepts the carried flags" ||
	bad "the shim refuses the carried ARGS $(args)"

fresh
echo 'ARGS="-listen-address :9341 -gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
run
expect "listen address and gpus" '"--web.listen-address=:9341 --gpus-acct"'

fresh
echo 'OPTIONS="-listen-address=0.0.0.0:9120 -gpus-acct=false"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
run
expect "charm OPTIONS, -gpus-acct=false" '"--web.listen-address=0.0.0.0:9120"'

fresh
echo 'ARGS="-gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
sed -i 's/^ARGS=""$/ARGS="--log.level debug"/' "$tmp/root/etc/default/slurm-exporter-shim"
cp "$tmp/root/etc/default/slurm-exporter-shim" "$tmp/edited"
run
cmp -s "$tmp/edited" "$tmp/root/etc/default/slurm-exporter-shim" && ok "an edited defaults file is left as it is" ||
	bad "an edited defaults file was changed"
said "edited file" 'was edited'
said "edited file" 'ARGS="--gpus-acct"'

fresh
cat >"$tmp/root/etc/systemd/system/slurm_exporter.service" <<'EOF'
[Service]
User=prometheus
ExecStart=/usr/local/bin/slurm_exporter \
  --web.listen-address=":9341" \
  --command.timeout=10s --log.format=json --no-collector.scheduler
EOF
run
expect "the fork's unit: its schema, --log.format, --command.timeout and a collector off carried" \
	'"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --web.listen-address=:9341 --log.format=json --slurmctld.timeout=10 --slurmrestd.timeout=10 --mapping.exclude=(slurm_scheduler_.*|slurm_(user_)?rpc_stats.*)"'
said "the fork's unit" "the sckyzo exporter's collectors that were off, their families left out (--mapping.exclude): scheduler"
said "the fork's unit" "the sckyzo schema reads most of its rows from slurmrestd: /usr/share/slurm-exporter-shim/enable-slurmrestd --jobs"
shim_schema sckyzo-slurm-exporter

fresh
printf 'ARGS="--log.format text --log.format=yaml --web.systemd-socket"\n' >"$tmp/root/etc/default/slurm_exporter"
run
expect "--log.format with its value apart, the fork's text as logfmt; a format the shim lacks" \
	'"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --log.format=logfmt"'
said "a format the shim lacks" "--log.format=yaml yaml (format not one of logfmt, json, text)"
said "--web.systemd-socket" "--web.systemd-socket (the shim's unit has no .socket unit"

fresh
cat >"$tmp/root/etc/systemd/system/slurm_exporter.service" <<'EOF'
[Service]
ExecStart=/usr/local/bin/slurm_exporter --web.listen-address=:9341
EOF
mkdir -p "$tmp/root/etc/systemd/system/slurm_exporter.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/local/bin/slurm_exporter --web.listen-address=:9400 --no-collector.gpus\n' \
	>"$tmp/root/etc/systemd/system/slurm_exporter.service.d/override.conf"
run
expect "a drop-in's ExecStart replaces the unit's; --no-collector.gpus" '"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --web.listen-address=:9400 --mapping.exclude=(slurm_gpus_.*)"'
said "--no-collector.gpus" "their families left out (--mapping.exclude): gpus"
shim_schema sckyzo-slurm-exporter

fresh
printf 'ARGS="--command.timeout 1m30s --collector.licenses --command.timeout=soon"\n' >"$tmp/root/etc/default/slurm_exporter"
run
expect "SckyzO's defaults file: no listen address (its :9341 is the shim's), a Go duration in seconds" \
	'"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --slurmctld.timeout=90 --slurmrestd.timeout=90"'
said "a duration that is none" "--command.timeout=soon soon (not a duration from 1ms to 24h)"
shim_schema sckyzo-slurm-exporter

# SckyzO's collector toggles: the last of a flag wins, a sub-flag that drops families, one that
# changes labels (not carried), an unknown collector; the shim leaves the families out
fresh
printf 'ARGS="--no-collector.licenses --collector.licenses --collector.scheduler=false --collector.fairshare.user-metrics=false --collector.queue.user-label=false --no-collector.bogus"\n' \
	>"$tmp/root/etc/default/slurm_exporter"
run
expect "SckyzO's collector toggles" \
	'"--mapping.file=/etc/slurm-exporter-shim/sckyzo-slurm-exporter.json --mapping.exclude=(slurm_scheduler_.*|slurm_(user_)?rpc_stats.*)|(slurm_user_fairshare.*)"'
said "SckyzO's collector toggles" "not carried: --collector.queue.user-label=false (the SckyzO schema serves these labels); --no-collector.bogus (no such collector in SckyzO's v1.8.4)"
if once_with && grep -q '^slurm_cpus_total' "$tmp/once" && ! grep -q '^slurm_scheduler_\|^slurm_rpc_stats' "$tmp/once" &&
	grep -q 'mapping.exclude: [1-9][0-9]* rows' "$tmp/once.err"; then
	ok "the shim with the carried ARGS leaves the scheduler's families out, serves the CPUs'"
else
	bad "the shim with the carried ARGS: $(tail -n 2 "$tmp/once.err")"
fi

# rivosinc's exporter: its .deb/.rpm ship no unit; its README writes prometheus-slurm-exporter.service,
# and systemctl edit's drop-in sets its variables
rivos_unit() {
	printf '[Unit]\nDescription=Prometheus SLURM Exporter\n\n[Service]\nExecStart=/usr/bin/prometheus-slurm-exporter %s\nRestart=always\nRestartSec=15\n' "$1" \
		>"$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service"
}
fresh
rivos_unit '-slurm.collect-diags -slurm.collect-licenses -slurm.collect-limits -slurm.poll-limit 30 -trace.enabled -web.log-level warning -slurm.cli-fallback=false'
mkdir -p "$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service.d"
printf '[Service]\nEnvironment="PATH=/opt/slurm/bin"\nEnvironment="CLI_TIMEOUT=60"\nEnvironment="MY_POLL_LIMIT=3"\n' \
	>"$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service.d/override.conf"
run
expect "rivosinc's unit: its schema on its :9092, the poll limit, CLI_TIMEOUT, the log level" \
	'"--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --log.level=warn --web.listen-address=:9092 --slurmctld.timeout=60 --slurmrestd.timeout=60 --slurmrestd.min-interval=30"'
said "rivosinc's unit" "found the old exporter's flags in /etc/systemd/system/prometheus-slurm-exporter.service (Environment CLI_TIMEOUT), /etc/systemd/system/prometheus-slurm-exporter.service (ExecStart)"
said "rivosinc's collector toggles" "not carried: -slurm.collect-limits (the rivosinc schema's account limit rows are unavailable: slurmdbd's associations are not read); -trace.enabled (the shim has no /trace endpoint); -slurm.cli-fallback=false (the shim runs no Slurm command"
said "rivosinc's unit" "the rivosinc schema reads most of its rows from slurmrestd"
shim_schema rivosinc-slurm-exporter

fresh
rivos_unit '-web.listen-address=127.0.0.1:9200 -slurm.sinfo-cli "sinfo -h" -metrics.exclude slurm_rpc.*'
printf '[Service]\nEnvironment=POLL_LIMIT=2.5\n' >>"$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service"
run
expect "rivosinc: its listen address, POLL_LIMIT, a flag's value apart not taken for a flag" \
	'"--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --web.listen-address=127.0.0.1:9200 --slurmrestd.min-interval=2.5 --mapping.exclude=(.*(slurm_rpc.*).*)|(slurm_(backfill_.*|daemon_thread_count|dbd_agent_queue_size|rpc_.*))|(slurm_lic_.*)|(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
said "-metrics.exclude and the collectors off" "the rivosinc exporter's collectors that were off, their families left out (--mapping.exclude): diags licenses limits"
shim_schema rivosinc-slurm-exporter

# rivosinc's .deb installed, run with no flag (its unit bare): dpkg names the package's maintainer
fresh
rivos_unit ''
mkdir -p "$tmp/root/var/lib/dpkg"
printf 'Package: other\nStatus: install ok installed\nMaintainer: abhinavDhulipala\n\nPackage: prometheus-slurm-exporter\nStatus: install ok installed\nMaintainer: abhinavDhulipala\nVersion: 1.7.0\n\n' \
	>"$tmp/root/var/lib/dpkg/status"
run
expect "rivosinc's package with no flag: its schema on :9092, its collectors off by default left out" \
	'"--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --web.listen-address=:9092 --mapping.exclude=(slurm_(backfill_.*|daemon_thread_count|dbd_agent_queue_size|rpc_.*))|(slurm_lic_.*)|(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
said "rivosinc's package" "/var/lib/dpkg/status (rivosinc's prometheus-slurm-exporter package)"
if once_with && grep -q '^slurm_partition_total_cpus' "$tmp/once" && ! grep -q '^slurm_daemon_thread_count\|^slurm_backfill_' "$tmp/once"; then
	ok "the shim with rivosinc's defaults: no sdiag family, as rivosinc without -slurm.collect-diags"
else
	bad "the shim with rivosinc's defaults: $(tail -n 2 "$tmp/once.err")"
fi
shim_schema rivosinc-slurm-exporter

# rivosinc's RPM installed (an RPM system: no dpkg status), its unit bare: rpm names the vendor; an
# rpm that knows no such package (or another vendor's) picks no schema
mkdir -p "$tmp/rpmbin"
printf '#!/bin/sh\n[ -n "$RPM_ANSWER" ] || exit 1\necho "$RPM_ANSWER"\n' >"$tmp/rpmbin/rpm"
chmod +x "$tmp/rpmbin/rpm"
fresh
rivos_unit ''
PATH="$tmp/rpmbin:$PATH" RPM_ANSWER='rivosinc|abhinavDhulipala' run
expect "rivosinc's RPM with no flag: its schema on :9092" \
	'"--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --web.listen-address=:9092 --mapping.exclude=(slurm_(backfill_.*|daemon_thread_count|dbd_agent_queue_size|rpc_.*))|(slurm_lic_.*)|(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
said "rivosinc's RPM" "the RPM database (rivosinc's prometheus-slurm-exporter package)"
fresh
echo 'ARGS="-gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
PATH="$tmp/rpmbin:$PATH" RPM_ANSWER='Fedora Project|Fedora Project' run
expect "another vendor's RPM of the same name: the legacy table" '"--gpus-acct"'

# vpenso's Debian package of the same name: not rivosinc's
fresh
mkdir -p "$tmp/root/var/lib/dpkg"
printf 'Package: prometheus-slurm-exporter\nStatus: install ok installed\nMaintainer: Debian Go Packaging Team <team+pkg-go@tracker.debian.org>\n\n' \
	>"$tmp/root/var/lib/dpkg/status"
echo 'ARGS="-gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
run
expect "vpenso's Debian package: the legacy table, no schema flag" '"--gpus-acct"'

fresh
touch "$tmp/pwned-not"
printf 'ARGS="$(touch %s/pwned) -listen-address `id` -gpus-acct"\n' "$tmp" >"$tmp/root/etc/default/prometheus-slurm-exporter"
run
[ ! -e "$tmp/pwned" ] && ok "the old file is never run" || bad "the old file's command substitution ran"
expect "hostile words are not carried" '"--gpus-acct"'

fresh
run
[ ! -s "$tmp/out" ] && cmp -s packaging/default/slurm-exporter-shim "$tmp/root/etc/default/slurm-exporter-shim" &&
	ok "no old exporter: nothing said, nothing changed" || bad "no old exporter: output or change"

fresh
echo 'ARGS="-gpus-acct"' >"$tmp/root/etc/default/prometheus-slurm-exporter"
run --dry-run
cmp -s packaging/default/slurm-exporter-shim "$tmp/root/etc/default/slurm-exporter-shim" && ok "--dry-run changes nothing" ||
	bad "--dry-run changed the file"

# The old exporter's unit enabled beside ours: the shim's unit Conflicts= with it. Disabled (its file
# kept) when the flags are carried; only said, with how, when the script changes nothing. The real
# systemctl, on the temporary root (--root: it reads the unit files, no systemd needed).
enabled() { systemctl --root="$tmp/root" is-enabled --quiet "$1" 2>/dev/null; }
fork_unit() {
	printf '[Service]\nUser=prometheus\nExecStart=/usr/local/bin/slurm_exporter --web.listen-address=":9341"\n\n[Install]\nWantedBy=multi-user.target\n' \
		>"$tmp/root/etc/systemd/system/slurm_exporter.service"
	systemctl --root="$tmp/root" enable slurm_exporter.service >/dev/null 2>&1
}
if ! command -v systemctl >/dev/null 2>&1; then
	bad "systemctl not found (systemd; scripts/install-deps.sh test installs it)"
else
	fresh
	fork_unit
	enabled slurm_exporter.service && ok "the fork's unit enabled (systemctl --root)" || bad "systemctl --root did not enable the fork's unit"
	run
	said "the fork's unit enabled" "disabled slurm_exporter.service (SckyzO/slurm_exporter's, on :9341): the shim's unit replaces it"
	! enabled slurm_exporter.service && [ -f "$tmp/root/etc/systemd/system/slurm_exporter.service" ] &&
		ok "the fork's unit disabled, its file kept" || bad "the fork's unit still enabled, or its file gone"

	fresh
	rivos_unit '-slurm.poll-limit 20'
	printf '\n[Install]\nWantedBy=multi-user.target\n' >>"$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service"
	systemctl --root="$tmp/root" enable prometheus-slurm-exporter.service >/dev/null 2>&1
	run --dry-run
	said "rivosinc's unit enabled, --dry-run" "prometheus-slurm-exporter.service (rivosinc's, on :9092) is enabled; the shim's unit conflicts with it: disable it: systemctl disable --now prometheus-slurm-exporter.service"
	enabled prometheus-slurm-exporter.service && ok "--dry-run leaves rivosinc's unit enabled" || bad "--dry-run disabled rivosinc's unit"
	run
	said "rivosinc's unit enabled" "disabled prometheus-slurm-exporter.service (rivosinc's, on :9092)"
	! enabled prometheus-slurm-exporter.service && ok "rivosinc's unit disabled" || bad "rivosinc's unit still enabled"

	# apt removed rivosinc's package first: its bare unit is no one's; the hint, then --from rivosinc
	fresh
	rivos_unit ''
	printf '\n[Install]\nWantedBy=multi-user.target\n' >>"$tmp/root/etc/systemd/system/prometheus-slurm-exporter.service"
	systemctl --root="$tmp/root" enable prometheus-slurm-exporter.service >/dev/null 2>&1
	run
	said "a bare unit, its package gone" "if it ran rivosinc's, whose package was removed first (apt does): /usr/share/slurm-exporter-shim/migrate-legacy-args --from rivosinc"
	cmp -s packaging/default/slurm-exporter-shim "$tmp/root/etc/default/slurm-exporter-shim" && ok "a bare unit, its package gone: nothing carried" ||
		bad "a bare unit, its package gone: the defaults file changed"
	run --from rivosinc
	expect "--from rivosinc: its schema on :9092" \
		'"--mapping.file=/etc/slurm-exporter-shim/rivosinc-slurm-exporter.json --web.listen-address=:9092 --mapping.exclude=(slurm_(backfill_.*|daemon_thread_count|dbd_agent_queue_size|rpc_.*))|(slurm_lic_.*)|(slurm_account_(collect_error|cpu_limit|job_alloc_limit|job_limit|mem_limit))"'
	said "--from rivosinc" "disabled prometheus-slurm-exporter.service (rivosinc's, on :9092)"
	run --from nobody
	grep -q -- '--from nobody: not vpenso, sckyzo or rivosinc' "$tmp/out" && ok "--from nobody refused" || bad "--from nobody: $(cat "$tmp/out")"

	fresh
	fork_unit
	echo '# edited' >>"$tmp/root/etc/default/slurm-exporter-shim"
	run
	said "the fork's unit enabled, the defaults file edited" "slurm_exporter.service (SckyzO/slurm_exporter's, on :9341) is enabled; the shim's unit conflicts with it: disable it: systemctl disable --now slurm_exporter.service"
	enabled slurm_exporter.service && ok "the defaults file edited: the fork's unit left enabled" || bad "the defaults file edited, but the fork's unit was disabled"

	# a unit without [Install] (systemctl: static) has nothing to disable
	fresh
	rivos_unit '-slurm.collect-diags'
	run
	! grep -q 'is enabled\|disabled prometheus' "$tmp/out" && ok "a static unit (no [Install]): nothing said about enabling it" ||
		bad "a static unit: $(cat "$tmp/out")"

	fresh
	fork_unit
	systemctl --root="$tmp/root" disable slurm_exporter.service >/dev/null 2>&1
	run
	! grep -q 'is enabled\|disabled slurm_exporter' "$tmp/out" && ok "the fork's unit not enabled: nothing said about it" ||
		bad "the fork's unit not enabled: $(cat "$tmp/out")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
