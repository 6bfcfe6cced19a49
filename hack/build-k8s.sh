#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, etcd and kubectl from the Go module proxy into a cache outside the clone.
# Prints the directory that holds the binaries (the envtest KUBEBUILDER_ASSETS convention).
#
#   KUBEBUILDER_ASSETS=<dir>   use binaries already there and build nothing
#   HCP_CACHE_DIR=<dir>        cache root (default ~/.cache/hcp-operators)
#
# Kubernetes is pinned to the minor that @kubernetes/client-node 2.x is generated from (1.36).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${HCP_CACHE_DIR:-$HOME/.cache/hcp-operators}"
OUT="${CACHE_ROOT}/k8s/v${K8S_VERSION}"

# Stage lines go to the terminal's stderr, kept as fd 3 (a build step's own output goes to a log).
exec 3>&2
log() { echo "[build-k8s] $*" >&3; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for bin in kube-apiserver etcd; do
    [[ -x "${KUBEBUILDER_ASSETS}/${bin}" ]] || { log "KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} has no ${bin}"; exit 1; }
  done
  echo "${KUBEBUILDER_ASSETS}"
  exit 0
fi

if [[ -x "${OUT}/kube-apiserver" && -x "${OUT}/etcd" && -x "${OUT}/kubectl" && -x "${OUT}/kube-controller-manager" ]]; then
  echo "${OUT}"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed to build kube-apiserver and etcd"; exit 1; }
mkdir -p "${OUT}"
# The go tool's own output (hundreds of "go: downloading" lines on a cold cache) goes to a log;
# the terminal gets one line per stage, and the log's end if a stage fails.
BUILD_LOG="${CACHE_ROOT}/build-k8s.log"
: >"${BUILD_LOG}"
log "first run: building Kubernetes ${K8S_VERSION} and etcd ${ETCD_VERSION} from the Go module proxy (8 to 10 minutes on 2 cores; details in ${BUILD_LOG})"
trap 'status=$?; if ((status != 0)); then log "failed; the end of ${BUILD_LOG}:"; tail -n 30 "${BUILD_LOG}" >&3; fi' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)

build_kubernetes() {
  local staging_version="v0.${K8S_VERSION#1.}" minor work gomod modules
  minor=$(echo "${K8S_VERSION}" | cut -d. -f2)
  work=$(mktemp -d)
  trap 'rm -rf "${work}"' RETURN
  # The staging modules differ per minor, so read them from k8s' own go.mod on the proxy.
  gomod=$(cd "${work}" && GOFLAGS= go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" |
    sed -n 's|.*"GoMod": "\(.*\)".*|\1|p')
  modules=$(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/src/.*|\1|p' "${gomod}")
  (
    cd "${work}"
    printf 'module local/kube-build\n\ngo 1.26.0\n\ngodebug default=go1.26\n' >go.mod
    for m in ${modules}; do go mod edit "-replace=${m}=${m}@${staging_version}"; done
    go mod edit "-require=k8s.io/kubernetes@v${K8S_VERSION}"
    go get "k8s.io/kubernetes/cmd/kube-apiserver@v${K8S_VERSION}" "k8s.io/kubernetes/cmd/kubectl@v${K8S_VERSION}" \
      "k8s.io/kubernetes/cmd/kube-controller-manager@v${K8S_VERSION}"
    local ldflags="-s -w \
      -X 'k8s.io/component-base/version.gitVersion=v${K8S_VERSION}' \
      -X 'k8s.io/component-base/version.gitMajor=1' \
      -X 'k8s.io/component-base/version.gitMinor=${minor}' \
      -X 'k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}' \
      -X 'k8s.io/client-go/pkg/version.gitMajor=1' \
      -X 'k8s.io/client-go/pkg/version.gitMinor=${minor}'"
    log "building kube-apiserver v${K8S_VERSION}"
    go build -trimpath -ldflags "${ldflags}" -o "${OUT}/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    log "building kubectl v${K8S_VERSION}"
    go build -trimpath -ldflags "${ldflags}" -o "${OUT}/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl
    # Namespace deletion and ownerReference garbage collection live in the controller manager.
    log "building kube-controller-manager v${K8S_VERSION}"
    go build -trimpath -ldflags "${ldflags}" -o "${OUT}/kube-controller-manager.tmp" \
      k8s.io/kubernetes/cmd/kube-controller-manager
  )
  mv "${OUT}/kube-apiserver.tmp" "${OUT}/kube-apiserver"
  mv "${OUT}/kubectl.tmp" "${OUT}/kubectl"
  mv "${OUT}/kube-controller-manager.tmp" "${OUT}/kube-controller-manager"
}

build_etcd() {
  local work
  work=$(mktemp -d)
  trap 'rm -rf "${work}"' RETURN
  (
    cd "${work}"
    printf 'module local/etcd-build\n\ngo 1.26.0\n' >go.mod
    go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
    log "building etcd ${ETCD_VERSION}"
    go build -trimpath -ldflags '-s -w' -o "${OUT}/etcd.tmp" go.etcd.io/etcd/server/v3
  )
  mv "${OUT}/etcd.tmp" "${OUT}/etcd"
}

[[ -x "${OUT}/etcd" ]] || build_etcd >>"${BUILD_LOG}" 2>&1
[[ -x "${OUT}/kube-apiserver" && -x "${OUT}/kubectl" && -x "${OUT}/kube-controller-manager" ]] ||
  build_kubernetes >>"${BUILD_LOG}" 2>&1
log "built in $(($(date +%s) - start))s into ${OUT}"
echo "${OUT}"
