#!/bin/sh
# Build and serve the legacy metrics on :9341.
#   scripts/run.sh                      serve the bundled Slurm 25.11 capture (no slurmctld needed)
#   scripts/run.sh http://ctl:6817      serve a live slurmctld (ctl:6817 means http://ctl:6817)
# Extra arguments after the URL go to slurm-exporter-shim (e.g. --gpus-acct).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh build
make -s
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
	# anything but a flag is the URL; "ctl1:6817" (no scheme) means http://ctl1:6817
	url=$1
	shift
	case "$url" in
	http://* | https://* | HTTP://* | HTTPS://*) ;;
	*://*) echo "run.sh: $url: only http:// and https:// URLs are supported" >&2; exit 2 ;;
	*) url=http://$url; echo "run.sh: no scheme given: using $url" >&2 ;;
	esac
	set -- --slurmctld.url "$url" "$@"
else
	echo "run.sh: no slurmctld URL given: serving the bundled capture tests/fixtures/slurm-25.11/04-resumed-busy" >&2
	set -- --replay-dir tests/fixtures/slurm-25.11/04-resumed-busy "$@"
fi
echo "run.sh: serving http://localhost:9341/metrics (Ctrl-C stops)" >&2
exec ./slurm-exporter-shim --mapping.file mappings/prometheus-slurm-exporter.json "$@"
