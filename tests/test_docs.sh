#!/bin/sh
# docs/metrics.md must list every mapping row with its current fidelity.
cd "$(dirname "$0")/.." || exit 1
exec python3 docs/gen-metrics-doc.py --check
