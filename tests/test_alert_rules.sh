#!/bin/sh
# docs/alert-rules.yml (shipped with the package) is a valid Prometheus rule file, and the copy shown
# in docs/operations.md is that file, byte for byte; promtool test rules evaluates the load alert
# (tests/alert-rules-test.yml). The last line is "N passed, M failed".
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
RULES=docs/alert-rules.yml
if promtool check rules "$RULES" >"$tmp/out" 2>&1; then
	ok "promtool check rules $RULES: $(grep -o 'SUCCESS: [0-9]* rules found' "$tmp/out")"
else
	bad "promtool check rules $RULES"
	sed 's/^/       | /' "$tmp/out"
fi
# the yaml block of "Self metrics and alert rules" in docs/operations.md
awk '/^## Self metrics and alert rules/ { s = 1 } s && /^```yaml$/ { y = 1; next } y && /^```$/ { exit } y' \
	docs/operations.md >"$tmp/doc.yml"
if cmp -s "$tmp/doc.yml" "$RULES"; then
	ok "docs/operations.md shows $RULES as it is"
else
	bad "docs/operations.md's alert rules differ from $RULES"
	diff "$RULES" "$tmp/doc.yml" | head -20 | sed 's/^/       | /'
fi
# the rules evaluated: tests/alert-rules-test.yml's series and the alerts they must (and must not) fire
if promtool test rules tests/alert-rules-test.yml >"$tmp/test" 2>&1; then
	ok "promtool test rules tests/alert-rules-test.yml: the node loaded beyond its allocation alerts, the others do not"
else
	bad "promtool test rules tests/alert-rules-test.yml"
	sed 's/^/       | /' "$tmp/test"
fi
n=$(grep -c '^ *- alert: ' "$RULES")
[ "$n" -ge 8 ] && ok "$n alerts" || bad "only $n alerts in $RULES"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
