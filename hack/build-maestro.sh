#!/usr/bin/env bash
# Builds the real Maestro (github.com/openshift-online/maestro, server + agent in one `maestro` binary)
# from the Go module proxy into a cache outside the clone, for the interoperability tests.
# Prints the directory that holds the binary.
#
#   MAESTRO_BIN=<file>         use that prebuilt binary and build nothing (prints its directory)
#   MAESTRO_VERSION=<version>  module version to build (default below)
#   HCP_CACHE_DIR=<dir>        cache root (default ~/.cache/hcp-operators)
#
# Maestro publishes no tags, and the Go module proxy reachable here answers only for the module
# versions it holds: listing, @latest and most pseudo-versions answer 403 "not available". The pin
# below (commit 48b47506a254, 2026-02-02) is one it serves. Two consequences:
#  - `go install <pkg>@<version>` fails ("loading deprecation … @v/list: 403"), so the build goes
#    through a throwaway wrapper module (like build-k8s.sh), where `go get` does not ask for the list;
#  - the pinned commit requires github.com/openshift-online/ocm-common v0.0.35, whose zip the proxy
#    does not serve; the wrapper requires v0.0.38 instead (what maestro itself moved to later; the
#    one package maestro uses from it, pkg/utils/parser/sql_parser, builds unchanged).
# Maestro's go.mod has no replace directives, so nothing else differs from its own build.
set -euo pipefail

MAESTRO_VERSION="${MAESTRO_VERSION:-v0.0.0-20260202062555-48b47506a254}"
OCM_COMMON_VERSION="${OCM_COMMON_VERSION:-v0.0.38}"
CACHE_ROOT="${HCP_CACHE_DIR:-$HOME/.cache/hcp-operators}"
OUT="${CACHE_ROOT}/maestro/${MAESTRO_VERSION}"

# Stage lines go to the terminal's stderr, kept as fd 3 (the build's own output goes to a log).
exec 3>&2
log() { echo "[build-maestro] $*" >&3; }

if [[ -n "${MAESTRO_BIN:-}" ]]; then
  [[ -x "${MAESTRO_BIN}" ]] || { log "MAESTRO_BIN=${MAESTRO_BIN} is not an executable file"; exit 1; }
  [[ "$(basename "${MAESTRO_BIN}")" == maestro ]] || { log "MAESTRO_BIN must name a file called maestro"; exit 1; }
  dirname "${MAESTRO_BIN}"
  exit 0
fi

if [[ -x "${OUT}/maestro" ]]; then
  echo "${OUT}"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed to build maestro"; exit 1; }
mkdir -p "${OUT}"
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
BUILD_LOG="${CACHE_ROOT}/build-maestro.log"
: >"${BUILD_LOG}"
trap 'status=$?; rm -rf "${work}"; if ((status != 0)); then log "failed; the end of ${BUILD_LOG}:"; tail -n 30 "${BUILD_LOG}" >&3; fi' EXIT
log "building github.com/openshift-online/maestro/cmd/maestro@${MAESTRO_VERSION} (about 8 minutes on 2 cores; details in ${BUILD_LOG})"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
(
  cd "${work}"
  printf 'module local/maestro-build\n\ngo 1.26.0\n' >go.mod
  go mod edit "-require=github.com/openshift-online/ocm-common@${OCM_COMMON_VERSION}"
  go get "github.com/openshift-online/maestro/cmd/maestro@${MAESTRO_VERSION}"
  go build -trimpath -ldflags '-s -w' -o "${OUT}/maestro.tmp" github.com/openshift-online/maestro/cmd/maestro
) >>"${BUILD_LOG}" 2>&1
mv "${OUT}/maestro.tmp" "${OUT}/maestro"
log "built in $(($(date +%s) - start))s into ${OUT}"
echo "${OUT}"
