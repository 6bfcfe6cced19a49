#!/usr/bin/env bash
# Builds Prometheus' promtool from the Go module proxy into a cache outside the clone, so that
# test/lint/alert-rules.test.ts checks config/monitoring's rules with `promtool check rules` (the
# test finds it in this cache, on PATH, or where PROMTOOL says). Prints the binary's path.
# Optional: without promtool the test still checks what it can without a PromQL parser.
#
#   PROMTOOL_VERSION=<version>  module version (Prometheus 3.x publishes its module as v0.3xx.y)
#   HCP_CACHE_DIR=<dir>         cache root (default ~/.cache/hcp-operators)
#
# Cold, on two cores, the build takes about an hour and 120 MB of disk for the binary.
set -euo pipefail

PROMTOOL_VERSION="${PROMTOOL_VERSION:-v0.316.0}"
CACHE_ROOT="${HCP_CACHE_DIR:-$HOME/.cache/hcp-operators}"
OUT="${CACHE_ROOT}/promtool/${PROMTOOL_VERSION}"

if [[ -x "${OUT}/promtool" ]]; then
  echo "${OUT}/promtool"
  exit 0
fi
command -v go >/dev/null || { echo "[build-promtool] go is not installed" >&2; exit 1; }
mkdir -p "${OUT}"
GOBIN="${OUT}" go install "github.com/prometheus/prometheus/cmd/promtool@${PROMTOOL_VERSION}" >&2
echo "${OUT}/promtool"
