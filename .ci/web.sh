#!/usr/bin/env bash
# Web status page suite: installs headless Chromium (Debian package
# "chromium") so the chromedp tests in e2e/web_test.go run, then runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH)/bin"
unset AWS_CA_BUNDLE

if ! command -v chromium >/dev/null 2>&1; then
	export DEBIAN_FRONTEND=noninteractive
	SUDO=""
	if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
	timeout 600 $SUDO apt-get update
	timeout 900 $SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core
fi
chromium --version
# --install: only make sure chromium is there (.ci/run then runs every test).
if [ "${1:-}" = "--install" ]; then exit 0; fi

go test -count=1 -timeout 10m -run 'TestWeb' ./web/... ./e2e/...
