#!/bin/sh
# The RPM (packaging/rpm/slurm-exporter-shim.spec), built on this Debian host with FOREIGN=1 (see
# packaging/rpm/README.md: --nodeps, no debuginfo, the systemd scriptlet macros as no-ops), into a
# temporary directory: the files both packages ship (the optional slurmrestd unit, its defaults file,
# run-slurmrestd and enable-slurmrestd included) with their modes, the three config files, the
# scriptlets (%post runs migrate-legacy-args, which carries the old exporter's and the SckyzO fork's
# flags and names the fork's enabled unit, before the units' own; both units in %post, %preun and
# %postun), the replacement of prometheus-slurm-exporter, and the packaged units and scripts equal to
# the repository's. Needs rpm (rpmbuild, rpm2archive; scripts/install-deps.sh test installs it):
# without it the test fails, it does not skip. Takes about 20 s (it builds the daemon).
# The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
PASS=0 FAIL=0
. tests/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for t in rpmbuild rpm rpm2archive; do
	command -v "$t" >/dev/null 2>&1 || { bad "$t not found (scripts/install-deps.sh test installs rpm)"; finish; }
done
version=$(cat VERSION)
ls -l build/*.rpm 2>/dev/null >"$T/before"
if ! FOREIGN=1 OUTDIR="$T/out" TMPDIR="$T" sh packaging/build-rpm.sh >"$T/build.log" 2>&1; then
	bad "FOREIGN=1 packaging/build-rpm.sh: $(tail -5 "$T/build.log" | tr '\n' ' ')"
	finish
fi
rpm=$(ls "$T/out/slurm-exporter-shim-$version"-*.rpm 2>/dev/null | head -n 1)
check "build-rpm.sh built slurm-exporter-shim-$version into OUTDIR" test -n "$rpm"
[ -n "$rpm" ] || finish
ls -l build/*.rpm 2>/dev/null >"$T/after"
check "build-rpm.sh wrote nothing into build/ with OUTDIR" cmp -s "$T/before" "$T/after"

# files, with their modes
rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$rpm" 2>/dev/null >"$T/files"
has_file() { grep -qxF -- "$1 $2" "$T/files"; }
for f in /usr/bin/slurm-exporter-shim /usr/share/slurm-exporter-shim/migrate-legacy-args \
	/usr/share/slurm-exporter-shim/run-slurmrestd /usr/share/slurm-exporter-shim/enable-slurmrestd; do
	check "ships $f, executable" has_file -rwxr-xr-x "$f"
done
for f in /usr/lib/systemd/system/slurm-exporter-shim.service /usr/lib/systemd/system/slurm-exporter-shim-slurmrestd.service \
	/etc/default/slurm-exporter-shim /etc/default/slurm-exporter-shim-slurmrestd /usr/share/slurm-exporter-shim/default.dist \
	/etc/slurm-exporter-shim/prometheus-slurm-exporter.json /etc/slurm-exporter-shim/slurm-node-load.json \
	/usr/share/man/man1/slurm-exporter-shim.1.gz \
	/usr/share/doc/slurm-exporter-shim/migration.md /usr/share/doc/slurm-exporter-shim/alert-rules.yml \
	/usr/share/slurm-exporter-shim/replace-file.sh; do
	check "ships $f" has_file -rw-r--r-- "$f"
done
rpm -qcp "$rpm" 2>/dev/null | sort >"$T/config"
printf '%s\n' /etc/default/slurm-exporter-shim /etc/default/slurm-exporter-shim-slurmrestd \
	/etc/slurm-exporter-shim/prometheus-slurm-exporter.json /etc/slurm-exporter-shim/slurm-node-load.json >"$T/config.want"
check "config files: both defaults files and the mappings ($(tr '\n' ' ' <"$T/config"))" cmp -s "$T/config" "$T/config.want"

# scriptlets: %post carries the old flags (and names the fork's enabled unit) before the units' own
rpm -qp --scripts "$rpm" 2>/dev/null >"$T/scripts"
sed -n '/^postinstall scriptlet/,/^preuninstall scriptlet/p' "$T/scripts" >"$T/post"
check "%post runs migrate-legacy-args" grep -q '^/usr/share/slurm-exporter-shim/migrate-legacy-args || :$' "$T/post"
check "%post: migrate-legacy-args before the shim's unit is set up" \
	test "$(grep -n 'migrate-legacy-args' "$T/post" | head -n 1 | cut -d: -f1)" -lt "$(grep -n 'systemd_post slurm-exporter-shim.service' "$T/post" | cut -d: -f1)"
for m in systemd_post systemd_preun systemd_postun_with_restart; do
	check "$m for the slurmrestd unit too" grep -q "$m slurm-exporter-shim-slurmrestd.service" "$T/scripts"
done
check "%pre creates the user slurm-exporter-shim" grep -q 'useradd -r -g slurm-exporter-shim ' "$T/scripts"

# it replaces prometheus-slurm-exporter
check "Provides prometheus-slurm-exporter" sh -c "rpm -qp --provides '$rpm' 2>/dev/null | grep -q '^prometheus-slurm-exporter = 100'"
check "Obsoletes prometheus-slurm-exporter" sh -c "rpm -qp --obsoletes '$rpm' 2>/dev/null | grep -q '^prometheus-slurm-exporter < 100'"

# the packaged units and scripts are the repository's
mkdir "$T/x"
rpm2archive - <"$rpm" | tar -xzf - -C "$T/x"
for pair in usr/lib/systemd/system/slurm-exporter-shim.service=packaging/systemd/slurm-exporter-shim.service \
	usr/lib/systemd/system/slurm-exporter-shim-slurmrestd.service=packaging/systemd/slurm-exporter-shim-slurmrestd.service \
	usr/share/slurm-exporter-shim/migrate-legacy-args=packaging/migrate-legacy-args \
	usr/share/slurm-exporter-shim/replace-file.sh=packaging/replace-file.sh \
	usr/share/slurm-exporter-shim/enable-slurmrestd=packaging/enable-slurmrestd \
	usr/share/slurm-exporter-shim/run-slurmrestd=packaging/run-slurmrestd \
	etc/default/slurm-exporter-shim-slurmrestd=packaging/default/slurm-exporter-shim-slurmrestd \
	usr/share/slurm-exporter-shim/default.dist=packaging/default/slurm-exporter-shim; do
	check "/${pair%%=*} is ${pair#*=}" cmp -s "$T/x/${pair%%=*}" "${pair#*=}"
done
check "the packaged program runs: --version $version" sh -c "'$T/x/usr/bin/slurm-exporter-shim' --version | head -n 1 | grep -qF ' $version '"
finish
