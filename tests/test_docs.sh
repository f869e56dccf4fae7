#!/bin/sh
# docs/metrics.md must list every mapping row with its current fidelity, and each peer schema's
# figures as build/tests/test_peers prints them now (make builds it before the shell tests).
cd "$(dirname "$0")/.." || exit 1
exec python3 docs/gen-metrics-doc.py --check
