#!/usr/bin/env bash
# Runs the real S3 clients (aws-cli v1 and v2, boto3 of two generations,
# rclone, s3cmd, mc, restic) against a real `tessera server`, over http and
# https. Installs the Debian packages it needs and builds mc from its Go
# module into a cache outside the repository. Exits non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS="$ROOT/e2e/clients"
SUITES=${SUITES:-"awscli-v1 awscli-v2 boto3-pip boto3-deb rclone s3cmd s3cmd-us-east-1 mc restic"}
SCHEMES=${SCHEMES:-"http https"}

install_packages() {
	local missing=()
	[ -x /usr/bin/aws ] || missing+=(awscli)
	command -v rclone >/dev/null || missing+=(rclone)
	command -v s3cmd >/dev/null || missing+=(s3cmd)
	command -v restic >/dev/null || missing+=(restic)
	/usr/bin/python3 -c 'import boto3' 2>/dev/null || missing+=(python3-boto3)
	command -v openssl >/dev/null || missing+=(openssl)
	command -v curl >/dev/null || missing+=(curl)
	if [ ${#missing[@]} -gt 0 ]; then
		export DEBIAN_FRONTEND=noninteractive
		timeout 600 apt-get update -qq
		timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}"
	fi
}

# mc from its module at a fixed version, built once per machine: the build
# cache and this binary live outside the repository and the suite's HOME.
MC_VERSION=v0.0.0-20250313080218-cf909e1063a9
MC_DIR="${TESSERA_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera-ci}/mc-$MC_VERSION"
install_mc() {
	[ -x "$MC_DIR/mc" ] && return
	mkdir -p "$MC_DIR"
	GOBIN="$MC_DIR" GOFLAGS=-mod=mod timeout 1200 go install "github.com/minio/mc@$MC_VERSION"
}

install_packages
case " $SUITES " in *" mc "*) install_mc ;; esac
export MC="$MC_DIR/mc" MC_VERSION

WORK=$(mktemp -d /tmp/tessera-clients.XXXXXX)
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill -INT "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

(cd "$ROOT" && go build -o "$WORK/tessera" .)

# A self-signed certificate for 127.0.0.1 and localhost.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
	-keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# start_server SCHEME: starts tessera in a fresh directory and exports
# ENDPOINT, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
start_server() {
	local scheme=$1 dir="$WORK/data-$1" out="$WORK/server-$1.out"
	local tls=()
	[ "$scheme" = https ] && tls=(--tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem")
	mkdir -p "$dir"
	TESSERA_ACCESS_KEY=clientsaccesskey TESSERA_SECRET_KEY=clientssecretkey0123456789 \
		"$WORK/tessera" server "$dir" --address 127.0.0.1:0 --web-address 127.0.0.1:0 \
		--log-level warn "${tls[@]}" >"$out" 2>"$WORK/server-$scheme.log" &
	SERVER_PID=$!
	for _ in $(seq 1 300); do
		if grep -q '^SecretKey:' "$out"; then break; fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server-$scheme.log"; exit 1; fi
		sleep 0.1
	done
	ENDPOINT=$(sed -n 's/^S3 endpoint: //p' "$out")
	export ENDPOINT
	export AWS_ACCESS_KEY_ID=$(sed -n 's/^AccessKey: //p' "$out")
	export AWS_SECRET_ACCESS_KEY=$(sed -n 's/^SecretKey: //p' "$out")
	export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
	echo "== tessera server at $ENDPOINT"
}

stop_server() {
	kill -INT "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}

# Clients must never read the developer's own configuration.
export HOME="$WORK/home" AWS_CONFIG_FILE="$WORK/home/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/home/aws-creds"
mkdir -p "$HOME"
export CERT="$WORK/cert.pem" WORK CLIENTS

declare -A RESULT
failed=0
start=$(date +%s)
for scheme in $SCHEMES; do
	start_server "$scheme"
	export SCHEME=$scheme
	if [ "$scheme" = https ]; then export AWS_CA_BUNDLE="$CERT"; else unset AWS_CA_BUNDLE; fi
	for suite in $SUITES; do
		t0=$(date +%s)
		echo "== $suite over $scheme"
		set +e
		case $suite in
		awscli-v1) AWS="$(command -v aws)" timeout 900 bash "$CLIENTS/awscli.sh" ;;
		awscli-v2) AWS=/usr/bin/aws timeout 900 bash "$CLIENTS/awscli.sh" ;;
		boto3-pip) timeout 900 python3 "$CLIENTS/boto3_suite.py" ;;
		boto3-deb) timeout 900 /usr/bin/python3 "$CLIENTS/boto3_suite.py" ;;
		rclone) timeout 600 bash "$CLIENTS/rclone.sh" ;;
		s3cmd) timeout 600 bash "$CLIENTS/s3cmd.sh" ;;
		s3cmd-us-east-1) S3CMD_LOCATION=us-east-1 timeout 600 bash "$CLIENTS/s3cmd.sh" ;;
		mc) timeout 600 bash "$CLIENTS/mc.sh" ;;
		restic) timeout 600 bash "$CLIENTS/restic.sh" ;;
		*) echo "unknown suite $suite"; false ;;
		esac
		rc=$?
		set -e
		took="$(( $(date +%s) - t0 ))s"
		if [ $rc -eq 0 ]; then RESULT["$suite/$scheme"]="PASS ($took)"; else
			RESULT["$suite/$scheme"]="FAIL rc=$rc ($took)"; failed=1; fi
		echo "== $suite over $scheme: ${RESULT[$suite/$scheme]}"
	done
	stop_server
	if [ $failed -ne 0 ]; then tail -50 "$WORK/server-$scheme.log" || true; fi
done
# Signature V2 and region-redirect suites (s3cmd --signature-v2, s3cmd with
# bucket_location = US, boto3 with signature_version "s3"): Go tests that
# start their own server; run here, where the packages are installed.
echo "== signature suites (e2e/sigv2_clients_test.go)"
if (cd "$ROOT" && go test -count=1 -v -run 'TestS3cmdSignatureV2|TestS3cmdRegionRedirect|TestBoto3SignatureV2' ./e2e/ | grep -E '^(---|ok|FAIL|PASS)|SKIP'); then
	RESULT[signatures]=PASS
else
	RESULT[signatures]=FAIL
	failed=1
fi
echo "== summary ($(( $(date +%s) - start ))s)"
for k in "${!RESULT[@]}"; do echo "$k: ${RESULT[$k]}"; done | sort
exit $failed
