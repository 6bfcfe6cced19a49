#!/usr/bin/env bash
# Builds Dex (github.com/dexidp/dex, the OpenID Connect provider) from the Go module proxy into a
# cache outside the clone: the local region's and the tests' sign-in provider for the portal and
# the session gate. Prints the directory that holds the `dex` binary.
#
#   DEX_BIN=<file>         use that prebuilt binary and build nothing (prints its directory)
#   DEX_VERSION=<version>  module version to build (default below)
#   DEX_RELEASE=<tag>      the release that version is, for `dex version` (default below)
#   HCP_CACHE_DIR=<dir>    cache root (default ~/.cache/hcp-operators)
#
# Dex's go.mod names the module github.com/dexidp/dex (no /v2), so its v2.x tags are no module
# versions; the pin is release v2.45.1 (commit 11d2eeb52b42, 2026-03-03) as a pseudo-version, which
# the proxy reachable here serves (it answers 403 for listings and for many other versions).
# Dex's go.mod replaces github.com/dexidp/dex/api/v2 with its own ./api/v2, so `go install` refuses
# the module; the build goes through a throwaway wrapper module (as build-maestro.sh does) that
# requires the published api/v2 v2.4.0, whose Go code is the same as v2.45.1's ./api/v2 (only
# its go.mod's dependency versions differ). The web templates and themes are embedded in the binary.
# Without cgo there is no SQLite storage; the harness runs Dex with in-memory storage.
set -euo pipefail

DEX_VERSION="${DEX_VERSION:-v0.0.0-20260303133905-11d2eeb52b42}"
DEX_RELEASE="${DEX_RELEASE:-v2.45.1}"
DEX_API_VERSION="${DEX_API_VERSION:-v2.4.0}"
CACHE_ROOT="${HCP_CACHE_DIR:-$HOME/.cache/hcp-operators}"
OUT="${CACHE_ROOT}/dex/${DEX_VERSION}"

# Stage lines go to the terminal's stderr, kept as fd 3 (the build's own output goes to a log).
exec 3>&2
log() { echo "[build-dex] $*" >&3; }

if [[ -n "${DEX_BIN:-}" ]]; then
  [[ -x "${DEX_BIN}" ]] || { log "DEX_BIN=${DEX_BIN} is not an executable file"; exit 1; }
  [[ "$(basename "${DEX_BIN}")" == dex ]] || { log "DEX_BIN must name a file called dex"; exit 1; }
  dirname "${DEX_BIN}"
  exit 0
fi

if [[ -x "${OUT}/dex" ]]; then
  echo "${OUT}"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed to build dex"; exit 1; }
mkdir -p "${OUT}"
start=$(date +%s)
work=$(mktemp -d)
BUILD_LOG="${CACHE_ROOT}/build-dex.log"
: >"${BUILD_LOG}"
trap 'status=$?; rm -rf "${work}"; if ((status != 0)); then log "failed; the end of ${BUILD_LOG}:"; tail -n 30 "${BUILD_LOG}" >&3; fi' EXIT
log "building github.com/dexidp/dex/cmd/dex@${DEX_VERSION} (about a minute on 2 cores with warm Go caches; details in ${BUILD_LOG})"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
(
  cd "${work}"
  printf 'module local/dex-build\n\ngo 1.26.0\n' >go.mod
  go mod edit "-require=github.com/dexidp/dex/api/v2@${DEX_API_VERSION}"
  go get "github.com/dexidp/dex/cmd/dex@${DEX_VERSION}"
  go build -trimpath -ldflags "-s -w -X main.version=${DEX_RELEASE}" \
    -o "${OUT}/dex.tmp" github.com/dexidp/dex/cmd/dex
) >>"${BUILD_LOG}" 2>&1
mv "${OUT}/dex.tmp" "${OUT}/dex"
log "built in $(($(date +%s) - start))s into ${OUT}"
echo "${OUT}"
