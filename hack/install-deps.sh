#!/usr/bin/env bash
# Installs the machine packages the project needs where they are missing (Debian), and checks Go.
# Idempotent and quick when everything is present.
set -euo pipefail

need_apt=()
command -v openssl >/dev/null || need_apt+=(openssl)
command -v git >/dev/null || need_apt+=(git)
# The harness runs its own mosquitto on a free port; the package's system service is not used.
[[ -x /usr/sbin/mosquitto ]] || command -v mosquitto >/dev/null || need_apt+=(mosquitto)
# The usage ledger's tests and `npm run local` run a private PostgreSQL (initdb + postgres from
# /usr/lib/postgresql/<major>/bin, hack/harness/postgres.ts); the package's own service is not used.
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
# The portal's browser tests drive the machine's Chromium with playwright-core (test/e2e/portal.test.ts).
[[ -x /usr/bin/chromium ]] || need_apt+=(chromium)

if ((${#need_apt[@]} > 0)); then
  echo "[install-deps] installing ${need_apt[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v go >/dev/null; then
  echo "[install-deps] Go (>= 1.26) is required to build kube-apiserver and etcd; set KUBEBUILDER_ASSETS to prebuilt binaries instead" >&2
  [[ -n "${KUBEBUILDER_ASSETS:-}" ]] || exit 1
fi
