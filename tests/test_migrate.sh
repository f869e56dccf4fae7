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
expect "the fork's unit (GPU collector on by default, --log.format carried)" '"--web.listen-address=:9341 --log.format=json --gpus-acct"'
said "the fork's unit" "not carried: --command.timeout=10s (the shim runs no Slurm command"
"${SHIM_BIN:-./slurm-exporter-shim}" $(args | tr -d '"') --version >/dev/null 2>&1 && ok "the shim accepts the fork's carried flags" ||
	bad "the shim refuses the carried ARGS $(args)"

fresh
printf 'ARGS="--log.format text --log.format=yaml --web.systemd-socket"\n' >"$tmp/root/etc/default/slurm_exporter"
run
expect "--log.format with its value apart, the fork's text as logfmt; a format the shim lacks" '"--log.format=logfmt --gpus-acct"'
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
expect "a drop-in's ExecStart replaces the unit's; --no-collector.gpus" '"--web.listen-address=:9400"'

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

# the fork's unit enabled beside ours: said, with how to disable it (both .deb and RPM run this script);
# a systemctl on PATH that answers is-enabled for slurm_exporter.service as told
mkdir -p "$tmp/bin"
printf '#!/bin/sh\n[ "$1 $2 $3" = "is-enabled --quiet slurm_exporter.service" ] && [ -e "$FORK_ENABLED" ]\n' >"$tmp/bin/systemctl"
chmod +x "$tmp/bin/systemctl"
fork_run() { PATH="$tmp/bin:$PATH" FORK_ENABLED="$tmp/fork-enabled" run; }
fresh
mkdir -p "$tmp/root/run/systemd/system"
touch "$tmp/fork-enabled"
fork_run
said "the fork's unit enabled" "slurm_exporter.service (SckyzO/slurm_exporter) is enabled and also listens on :9341; disable it: systemctl disable --now slurm_exporter.service"
rm -f "$tmp/fork-enabled"
fork_run
[ ! -s "$tmp/out" ] && ok "the fork's unit not enabled: nothing said" || bad "the fork's unit not enabled: $(cat "$tmp/out")"
touch "$tmp/fork-enabled"
rm -rf "$tmp/root/run/systemd"
fork_run
[ ! -s "$tmp/out" ] && ok "not under systemd: systemctl not asked" || bad "not under systemd: $(cat "$tmp/out")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
