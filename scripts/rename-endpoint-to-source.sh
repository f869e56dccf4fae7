#!/bin/sh
# One use, then it removes itself. Run at the repository root after merging p2c and the other branches: finishes the
# endpoint -> source rename in files p2c did not own, then removes the transitional src/endpoint.h.
# tests/fake_slurmctld.c keeps its own (independent) enum endpoint and is left alone.
set -e
files=$(git grep -l -E 'endpoint\.h|enum endpoint\b|endpoint_info|endpoint_for_metric|src/endpoint\.c|\bEP_(JOBS|NODES|PARTITIONS|SCHEDULER|UA|COUNT)\b|(^|[^.>_A-Za-z])endpoints\[|mapping_endpoints|(->|\.)endpoints\b|unsigned endpoints;' \
	-- 'src/*.c' 'src/*.h' 'tests/*.c' 'fuzz/*.c' 'fuzz/*.h' 'fuzz/*.sh' 'bench/*.c' | grep -v -x -e tests/fake_slurmctld.c -e src/endpoint.h || true)
[ -n "$files" ] && sed -i \
	-e 's/#include "endpoint\.h"/#include "source.h"/' \
	-e 's/src\/endpoint\.c/src\/source.c/g' \
	-e 's/\benum endpoint\b/enum source_id/g' \
	-e 's/\bstruct endpoint_info\b/struct source/g' \
	-e 's/\bendpoint_for_metric\b/source_for_metric/g' \
	-e 's/\bEP_JOBS\b/SRC_JOBS/g; s/\bEP_NODES\b/SRC_NODES/g; s/\bEP_PARTITIONS\b/SRC_PARTITIONS/g' \
	-e 's/\bEP_SCHEDULER\b/SRC_SCHEDULER/g; s/\bEP_UA\b/SRC_UA/g; s/\bEP_COUNT\b/SRC_COUNT/g' \
	-e 's/\(^\|[^.>_A-Za-z]\)endpoints\[/\1sources[/g' \
	-e 's/\bmapping_endpoints\b/mapping_sources/g' \
	-e 's/\(->\|\.\)endpoints\b/\1sources/g' \
	-e 's/^\(\s*unsigned\) endpoints;/\1 sources;  /' \
	$files
git rm -q src/endpoint.h
echo "renamed in: $files"
git rm -q scripts/rename-endpoint-to-source.sh  # one use only
