#!/bin/sh
# TLS and basic auth from --web.config.file (exporter-toolkit format), end to end with curl against a
# running shim on 127.0.0.1 (replaying tests/fixtures/slurm-25.11/04-resumed-busy):
#   - TLS: 200 and the metrics over https (--cacert and -k), plain HTTP on the TLS port gets no HTTP
#     answer, min_version is enforced (toolkit default TLS 1.2; TLS13 refuses a TLS 1.2 client);
#   - basic auth over TLS and over plain HTTP: no credentials 401 with WWW-Authenticate, wrong
#     password / unknown user 401, right password 200; configured headers on 200 and 401; a NUL in
#     the password 401, scheme "basic" 200, unpadded base64 401, POST without credentials 401 (405
#     with them), two Content-Length headers 400;
#   - cipher_suites applied: a listed suite works, an unlisted one is refused (TLS 1.2 and 1.3), and
#     a list GnuTLS cannot apply exactly stops the start;
#   - invalid web configs: the binary exits non-zero at start, and stderr names file:line:column.
# Fixtures: tests/webconfig/*.yml, cert.pem, key.pem (see tests/webconfig/README.md: alice's password is
# "correct horse", bob's "hunter2") and tests/webconfig/tls-test/. Nothing is generated at test time.
# Env: SHIM_BIN (default ./slurm-exporter-shim). Run from the repository root.
# Needs curl; openssl (s_client) for the TLS 1.1 check, skipped if absent.
set -u
cd "$(dirname "$0")/.." || exit 1

SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
STATE=tests/fixtures/slurm-25.11/04-resumed-busy
MAPPING=mappings/prometheus-slurm-exporter.json
WC=tests/webconfig
CA=$WC/cert.pem
TMP=$(mktemp -d /tmp/shim-test-tls.XXXXXX) || exit 1
PASS=0
FAIL=0
SHIM_PID=
PORT=

cleanup() {
	if [ -n "$SHIM_PID" ]; then
		kill "$SHIM_PID" 2>/dev/null
		wait "$SHIM_PID" 2>/dev/null
	fi
	SHIM_PID=
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/     /' | head -20; return 0; }
check() { # check NAME CONDITION-COMMAND... [details come from $DETAIL]
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name" "${DETAIL:-}"; fi
}
DETAIL=

# a random port below the kernel's ephemeral range (as tests/lib.sh draws them)
rand_port() { echo $((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12000)); }

# start_shim WEBCONFIG: start the shim on a free random port; sets SHIM_PID and PORT.
start_shim() {
	stop_shim
	for _try in 1 2 3 4 5 6 7 8; do
		PORT=$(rand_port)
		: >"$TMP/shim.log"
		"$SHIM_BIN" --replay-dir "$STATE" --mapping.file "$MAPPING" --web.listen-address "127.0.0.1:$PORT" \
			--web.config.file "$1" 2>"$TMP/shim.log" >/dev/null &
		SHIM_PID=$!
		i=0
		while [ $i -lt 100 ]; do
			grep -q 'listening on' "$TMP/shim.log" && return 0
			kill -0 "$SHIM_PID" 2>/dev/null || break
			sleep 0.05
			i=$((i + 1))
		done
		wait "$SHIM_PID" 2>/dev/null
		SHIM_PID=
		grep -q 'cannot listen\|in use' "$TMP/shim.log" || break # anything but a taken port is fatal
	done
	echo "cannot start $SHIM_BIN with $1:" >&2
	cat "$TMP/shim.log" >&2
	return 1
}

stop_shim() {
	if [ -n "$SHIM_PID" ]; then
		kill "$SHIM_PID" 2>/dev/null
		wait "$SHIM_PID" 2>/dev/null
	fi
	SHIM_PID=
}

# stop_checked LABEL: SIGTERM the shim; it must exit 0, with no sanitizer report in its log
stop_checked() {
	kill "$SHIM_PID" 2>/dev/null
	wait "$SHIM_PID"
	src=$?
	SHIM_PID=
	DETAIL=$(grep -E 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/shim.log" | head -20)
	check "$1: exits 0 after SIGTERM (exit $src), no sanitizer report" eval '[ "$src" -eq 0 ] && [ -z "$DETAIL" ]'
}

# get URL [curl args...]: sets CODE (HTTP status, 000 when none), RC (curl's exit), body in
# $TMP/body, headers in $TMP/headers.
get() {
	url=$1
	shift
	: >"$TMP/body"
	: >"$TMP/headers"
	CODE=$(curl -sS --max-time 10 -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$@" "$url" 2>"$TMP/curl.err")
	RC=$?
	DETAIL="curl rc=$RC code=$CODE $(cat "$TMP/curl.err")
$(head -c 600 "$TMP/headers")"
}

is_metrics() { # the body is the shim's exposition for the 04-resumed-busy state
	grep -q '^# TYPE slurm_cpus_total gauge' "$TMP/body" &&
		grep -q '^slurm_exporter_shim_up{endpoint="nodes"} 1$' "$TMP/body"
}
has_header() { tr -d '\r' <"$TMP/headers" | grep -qi "^$1"; }
code_is() { [ "$RC" -eq 0 ] && [ "$CODE" = "$1" ]; }

if [ ! -x "$SHIM_BIN" ]; then
	echo "SHIM_BIN $SHIM_BIN is not executable"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---------------------------------------------------------------- TLS only
if start_shim "$WC/tls_only.yml"; then
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA"
	check "tls: https with --cacert (cert for 127.0.0.1) gives 200" code_is 200
	check "tls: the body is the metrics" is_metrics
	get "https://localhost:$PORT/metrics" --cacert "$CA" --resolve "localhost:$PORT:127.0.0.1"
	check "tls: https://localhost with --cacert gives 200" code_is 200
	get "https://127.0.0.1:$PORT/metrics" -k
	check "tls: https with -k gives 200" code_is 200
	get "https://127.0.0.1:$PORT/metrics"
	check "tls: an untrusting client refuses the self-signed cert (curl 60)" [ "$RC" -eq 60 ]
	get "http://127.0.0.1:$PORT/metrics"
	check "tls: plain http on the TLS port gets no HTTP answer" eval '[ "$RC" -ne 0 ] && [ "$CODE" = 000 ]'
	get "https://127.0.0.1:$PORT/metrics" -k --tlsv1.2 --tls-max 1.2
	check "tls: TLS 1.2 accepted by default" code_is 200
	get "https://127.0.0.1:$PORT/metrics" -k --tlsv1.3
	check "tls: TLS 1.3 accepted by default" code_is 200
	if command -v openssl >/dev/null 2>&1; then
		# curl's OpenSSL will not offer TLS 1.1 at all; s_client can, at security level 0
		echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' \
			>"$TMP/s_client" 2>&1
		rc=$?
		DETAIL=$(grep -E 'Protocol|Cipher is|error' "$TMP/s_client")
		check "tls: TLS 1.1 refused (toolkit default min_version TLS12)" eval '[ "$rc" -ne 0 ] && ! grep -q "Cipher is ECDHE" "$TMP/s_client"'
		echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -tls1_2 >"$TMP/s_client" 2>&1
		rc=$?
		DETAIL=$(grep -E 'Protocol|Cipher is|error' "$TMP/s_client")
		check "tls: s_client TLS 1.2 handshake works (control)" [ "$rc" -eq 0 ]
	else
		echo "skip tls: TLS 1.1 refusal (no openssl)"
	fi
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --data-binary 'x=1'
	check "tls: POST with a body gets 405 (an answer, not a dropped connection)" code_is 405
	check "tls: 405 says Allow: GET, HEAD" has_header 'Allow: GET, HEAD'
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA"
	check "tls: still serving after the bad clients" code_is 200
	stop_checked tls
else
	bad "tls: start with $WC/tls_only.yml"
fi

# ---------------------------------------------------------------- TLS 1.3 only
if start_shim "$WC/tls-test/tls13.yml"; then
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tls-max 1.2
	check "tls13: a TLS 1.2 client is refused (curl 35)" [ "$RC" -eq 35 ]
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tlsv1.3
	check "tls13: a TLS 1.3 client gets 200" code_is 200
	stop_checked tls13
else
	bad "tls13: start with $WC/tls-test/tls13.yml"
fi

# ---------------------------------------------------------------- cipher_suites applied
# tests/webconfig/ciphers.yml lists TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 only (the certificate is
# ECDSA): over TLS 1.2 that suite is the only one served; over TLS 1.3 only the suite of its cipher
# (GnuTLS has one cipher list for both versions). curl names suites in OpenSSL's spelling.
if start_shim "$WC/ciphers.yml"; then
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256
	check "ciphers: the listed TLS 1.2 suite gets 200" code_is 200
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tls-max 1.2 --ciphers ECDHE-ECDSA-AES256-GCM-SHA384
	check "ciphers: an unlisted TLS 1.2 suite is refused (curl 35)" [ "$RC" -eq 35 ]
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tls-max 1.2 --ciphers ECDHE-ECDSA-CHACHA20-POLY1305
	check "ciphers: another unlisted TLS 1.2 suite is refused (curl 35)" [ "$RC" -eq 35 ]
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256
	check "ciphers: TLS 1.3 with the listed suite's cipher gets 200" code_is 200
	get "https://127.0.0.1:$PORT/metrics" --cacert "$CA" --tlsv1.3 --tls13-ciphers TLS_AES_256_GCM_SHA384
	check "ciphers: TLS 1.3 with another cipher is refused (curl 35)" [ "$RC" -eq 35 ]
	stop_checked ciphers
else
	bad "ciphers: start with $WC/ciphers.yml"
fi
# a list GnuTLS cannot apply as it is stops the start, with the position and the suite it would add
timeout 20 "$SHIM_BIN" --replay-dir "$STATE" --mapping.file "$MAPPING" --web.listen-address 127.0.0.1:0 \
	--web.config.file "$WC/bad_cipher_cross.yml" >"$TMP/out" 2>&1
rc=$?
DETAIL=$(cat "$TMP/out")
check "ciphers: a list GnuTLS would widen is refused at start (exit 1, file:line:column)" eval \
	'[ "$rc" -eq 1 ] && grep -qF "bad_cipher_cross.yml:6:3: tls_server_config.cipher_suites: GnuTLS enables" "$TMP/out"'

# ---------------------------------------------------------------- TLS + basic auth + headers
if start_shim "$WC/full.yml"; then
	U="https://127.0.0.1:$PORT/metrics"
	get "$U" --cacert "$CA"
	check "tls+auth: no credentials gives 401" code_is 401
	check "tls+auth: 401 carries WWW-Authenticate: Basic realm=..." has_header 'WWW-Authenticate: Basic realm="'
	check "tls+auth: 401 carries the configured headers (X-Frame-Options)" has_header 'X-Frame-Options: deny'
	check "tls+auth: 401 does not leak metrics" eval '! grep -q slurm_ "$TMP/body"'
	get "$U" --cacert "$CA" -u 'alice:wrong horse'
	check "tls+auth: wrong password gives 401" code_is 401
	get "$U" --cacert "$CA" -u 'alice:'
	check "tls+auth: empty password gives 401" code_is 401
	get "$U" --cacert "$CA" -u 'mallory:correct horse'
	check "tls+auth: unknown user gives 401" code_is 401
	get "$U" --cacert "$CA" -u 'alice:hunter2'
	check "tls+auth: another user's password gives 401" code_is 401
	get "$U" --cacert "$CA" -H 'Authorization: Bearer abc'
	check "tls+auth: a non-Basic Authorization gives 401" code_is 401
	get "$U" --cacert "$CA" -u 'alice:correct horse'
	check "tls+auth: right password (alice, \$2y\$ cost 4) gives 200" code_is 200
	check "tls+auth: the body is the metrics" is_metrics
	check "tls+auth: 200 carries the configured headers" has_header 'X-Content-Type-Options: nosniff'
	get "$U" --cacert "$CA" -u 'bob:hunter2'
	check "tls+auth: right password (bob, \$2y\$ cost 5) gives 200" code_is 200
	get "$U" --cacert "$CA" -u 'carol:secret'
	check "tls+auth: right password (carol, \$2b\$) gives 200" code_is 200
	get "https://127.0.0.1:$PORT/" --cacert "$CA"
	check "tls+auth: the landing page needs credentials too" code_is 401
	get "https://127.0.0.1:$PORT/native/metrics/nodes" --cacert "$CA"
	check "tls+auth: the native passthrough needs credentials too" code_is 401
	get "https://127.0.0.1:$PORT/native/metrics/nodes" --cacert "$CA" -u 'alice:correct horse'
	check "tls+auth: the native passthrough over TLS with the right password gives 200" code_is 200
	check "tls+auth: the native passthrough serves slurmctld's own families" eval 'grep -q "^slurm_node_cpus{" "$TMP/body"'
	get "http://127.0.0.1:$PORT/metrics" -u 'alice:correct horse'
	check "tls+auth: right password over plain http gets no HTTP answer" eval '[ "$RC" -ne 0 ] && [ "$CODE" = 000 ]'
	stop_checked tls+auth
else
	bad "tls+auth: start with $WC/full.yml"
fi

# ---------------------------------------------------------------- basic auth without TLS
if start_shim "$WC/auth_only.yml"; then
	U="http://127.0.0.1:$PORT/metrics"
	get "$U"
	check "auth: no credentials gives 401" code_is 401
	check "auth: 401 carries WWW-Authenticate: Basic" has_header 'WWW-Authenticate: Basic realm="slurm-exporter-shim"'
	get "$U" -u 'alice:Correct horse'
	check "auth: wrong password gives 401" code_is 401
	get "$U" -u 'alice:correct horse'
	check "auth: right password gives 200" code_is 200
	check "auth: the body is the metrics" is_metrics
	get "$U" -u 'alice:correct horse' -X GET --data-binary 'x=1'
	check "auth: GET with a body gets 405 (an answer, not a dropped connection)" code_is 405
	get "https://127.0.0.1:$PORT/metrics" -k -u 'alice:correct horse'
	check "auth: https on the plain port fails" [ "$RC" -ne 0 ]
	# the decoded lengths count, the scheme is case-insensitive, base64 is strict
	get "$U" -H "Authorization: Basic $(printf 'alice:correct horse\000junk' | base64 -w0)"
	check "auth: a NUL then junk after the right password gives 401" code_is 401
	get "$U" -H "Authorization: basic $(printf 'alice:correct horse' | base64 -w0)"
	check "auth: scheme 'basic' (lower case, RFC 7617) gives 200" code_is 200
	get "$U" -H "Authorization: Basic $(printf 'alice:correct horse' | base64 -w0 | tr -d =)"
	check "auth: base64 without its padding gives 401" code_is 401
	get "$U" -X POST
	check "auth: POST without credentials gives 401, as GET" code_is 401
	check "auth: that 401 carries WWW-Authenticate" has_header 'WWW-Authenticate: Basic'
	get "$U" --data-binary 'x=1'
	check "auth: POST with a body and no credentials gives 401" code_is 401
	get "$U" -X POST -u 'alice:correct horse'
	check "auth: POST with credentials gives 405" code_is 405
	get "$U" -u 'alice:correct horse' -H 'Content-Length: 0' -H 'Content-Length: 0'
	check "auth: two Content-Length headers give 400" code_is 400
	get "$U" -u 'alice:correct horse'
	check "auth: still serving after the bad clients" code_is 200
	stop_checked auth
else
	bad "auth: start with $WC/auth_only.yml"
fi

# ---------------------------------------------------------------- invalid web configs
# FILE|POSITION|REASON FRAGMENT: the binary must exit non-zero at start (it must not start serving)
# and log "FILE:LINE:COL: reason". Fragments avoid quotes, which the logger may escape.
bad_start() { # bad_start FILE EXPECTED-PREFIX FRAGMENT
	port=$(rand_port)
	timeout 20 "$SHIM_BIN" --replay-dir "$STATE" --mapping.file "$MAPPING" --web.listen-address "127.0.0.1:$port" \
		--web.config.file "$1" >/dev/null 2>"$TMP/err"
	rc=$?
	DETAIL="exit $rc; stderr: $(cat "$TMP/err")"
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		bad "bad config $1: exits non-zero at start" "$DETAIL"
	elif ! grep -qF -- "$2" "$TMP/err" || ! grep -qF -- "$3" "$TMP/err"; then
		bad "bad config $1: message names $2 ... $3" "$DETAIL"
	else
		ok "bad config $1: exit $rc, '$2 ... $3'"
	fi
	DETAIL=
}
while IFS='|' read -r file pos reason; do
	[ -n "$file" ] || continue
	bad_start "$file" "$file$pos" "$reason"
done <<EOF
$WC/bad_syntax.yml|:4:2: |YAML syntax error: did not find expected key
$WC/bad_hash.yml|:3:12: |is not a bcrypt hash
$WC/bad_unknown_key.yml|:4:1: |web_listen_address
$WC/bad_min_version.yml|:4:16: |unknown TLS version
$WC/bad_cert_missing.yml|:2:14: |No such file or directory
$WC/bad_client_auth.yml|:4:21: |is not supported by slurm-exporter-shim
$WC/bad_key_swapped.yml|:2:14: |does not contain a PEM certificate
$WC/tls-test/bad_key_file_missing.yml|:3:13: |tls-test/nothing-here.pem
$WC/tls-test/bad_tab_indent.yml|:2:1: |found character that cannot start any token
$WC/tls-test/bad_version_order.yml|:5:16: |max_version TLS12 is lower than min_version TLS13
$WC/tls-test/does-not-exist.yml|: |cannot read web config: No such file or directory
EOF
# A certificate/key pair that does not match is found by GnuTLS when the daemon starts: the message
# has no position, but names the reason.
bad_start "$WC/tls-test/mismatch.yml" "cannot start the HTTP server on 127.0.0.1:" "do not match"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
