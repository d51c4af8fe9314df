#!/usr/bin/env bash
# Runs two public S3 conformance suites against a real `tessera server` and
# prints their scores:
#   - minio-go's functional tests (mint's functional_tests.go of the minio-go
#     version in go.mod), MINT_MODE=full, once with the default client and once
#     with TrailingHeaders on every client;
#   - versitygw's integration suite, `versitygw test full-flow`, once as it
#     is and once with --versioning-enabled (every test bucket versioned,
#     and versitygw's versioning and object-lock tests added).
# Both are built from the Go module cache (the module proxy fills it) and the
# binaries are cached outside the repository, keyed by version and patch.
#
# Fails only on a regression: a test failing that .ci/conformance/SUITE.expected
# does not list. A listed test that now passes is printed, so the list can be
# trimmed. CONFORMANCE_UPDATE=1 rewrites the lists from this run instead.
# SUITES picks suites: "minio-go-default minio-go-trailing versitygw
# versitygw-versioning".
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONF="$ROOT/.ci/conformance"
SUITES=${SUITES:-"minio-go-default minio-go-trailing versitygw versitygw-versioning"}
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}
CACHE=${CONFORMANCE_CACHE:-"$(dirname "$(go env GOCACHE)")/tessera-conformance"}
# Each suite takes 1 to 2.5 minutes on two shared cores; the bound only stops
# a hang.
SUITE_TIMEOUT=${SUITE_TIMEOUT:-600}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-900}
MINIO_GO_VERSION=$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/minio/minio-go/v7)

# The tally is a small Python script (python3 is Debian's; the client suites
# need it too).
if ! command -v python3 >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	timeout 600 apt-get update -qq
	timeout 900 apt-get install -y -qq --no-install-recommends python3
fi

# A CA bundle in the environment makes the AWS SDK refuse plain http.
unset AWS_CA_BUNDLE

WORK=$(mktemp -d /tmp/tessera-conformance.XXXXXX)
SERVER_PID=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	stop_server
	rm -rf "$WORK"
}
trap cleanup EXIT

# The suites must never read the developer's own AWS configuration. (Only the
# suites get this HOME: go itself keeps its module cache and settings.)
SUITE_ENV=(HOME="$WORK/home" AWS_CONFIG_FILE="$WORK/home/aws-config" AWS_SHARED_CREDENTIALS_FILE="$WORK/home/aws-creds")
mkdir -p "$WORK/home"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION

ACCESS_KEY=conformanceaccesskey
SECRET_KEY=conformancesecretkey0123456789

# module_dir MODULE@VERSION: the module's directory in the (read-only) cache.
module_dir() {
	(cd "$WORK" && timeout "$BUILD_TIMEOUT" go mod download -json "$1") |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# replace_once FILE OLD NEW: replaces the one occurrence of the fixed string
# OLD in FILE by NEW, and fails when OLD is not there exactly once, so a new
# upstream version cannot silently drop a patch.
replace_once() {
	local file=$1 old=$2 new=$3 content
	content=$(<"$file")
	local rest=${content#*"$old"}
	if [ "$rest" = "$content" ] || [ "${rest#*"$old"}" != "$rest" ]; then
		echo "patch does not apply to $file: expected exactly one '$old'" >&2
		return 1
	fi
	printf '%s\n' "${content/"$old"/"$new"}" >"$file"
}

# The minio-go copy CI builds gets one switch: functional_tests.go has no
# setting that turns TrailingHeaders on for its default clients, so
# MINT_TRAILING_HEADERS=1 turns it on in NewClient, the one place every
# client is made (the tests that already ask for trailers keep them).
MINIO_OLD='		TrailingHeaders: config.TrailingHeaders,'
MINIO_NEW='		TrailingHeaders: config.TrailingHeaders || os.Getenv("MINT_TRAILING_HEADERS") == "1", // tessera CI'

# versitygw's DeleteObject_conditional_writes dereferences PutObject's
# x-amz-object-size response header, which S3 sends only for directory
# buckets; without it the whole run panics. tessera does not send a header S3
# does not send, so the copy CI builds guards the nil pointer and takes the
# size from the HeadObject the test already makes. (PutObject_success checks
# the same header for nil itself and fails; it is listed as expected.)
VGW_FILE=tests/integration/DeleteObject.go
VGW_OLD='			*size = *res.res.Size'
VGW_NEW='			if res.res.Size != nil { *size = *res.res.Size } else { *size = *out.ContentLength } // tessera CI: S3 sends x-amz-object-size only for directory buckets'

# cache_key PARTS...: a short hash naming a cached build.
cache_key() { printf '%s\n' "$@" | sha256sum | cut -c1-12; }

# build_minio_go: prints the path of the functional-test binary, building it
# on a cache miss.
build_minio_go() {
	local dir
	dir="$CACHE/minio-go-$MINIO_GO_VERSION-$(cache_key "$MINIO_OLD" "$MINIO_NEW")"
	if [ ! -x "$dir/functional" ]; then
		local src tmp="$WORK/build-minio-go"
		src=$(module_dir "github.com/minio/minio-go/v7@$MINIO_GO_VERSION")
		mkdir -p "$tmp" "$dir"
		cp "$src/functional_tests.go" "$src/go.sum" "$tmp/"
		chmod u+w "$tmp"/*
		replace_once "$tmp/functional_tests.go" "$MINIO_OLD" "$MINIO_NEW"
		# Built as mint builds it: the file named on the command line (which
		# ignores its `mint` build constraint) in a module of its own. With
		# -tags mint the file would join package minio in the module's root.
		(cd "$tmp" && go mod init tessera.conformance/miniogo >/dev/null 2>&1 &&
			go mod edit -require="github.com/minio/minio-go/v7@$MINIO_GO_VERSION" &&
			timeout "$BUILD_TIMEOUT" go mod tidy &&
			timeout "$BUILD_TIMEOUT" go build -o "$dir/functional.tmp" functional_tests.go) >&2
		mv "$dir/functional.tmp" "$dir/functional"
	fi
	echo "$dir/functional"
}

# build_versitygw: prints the path of the versitygw binary, building it on a
# cache miss.
build_versitygw() {
	local dir
	dir="$CACHE/versitygw-$VERSITYGW_VERSION-$(cache_key "$VGW_FILE" "$VGW_OLD" "$VGW_NEW")"
	if [ ! -x "$dir/versitygw" ]; then
		local src tmp="$WORK/build-versitygw"
		src=$(module_dir "github.com/versity/versitygw@$VERSITYGW_VERSION")
		mkdir -p "$dir"
		cp -r "$src" "$tmp"
		chmod -R u+w "$tmp"
		replace_once "$tmp/$VGW_FILE" "$VGW_OLD" "$VGW_NEW"
		(cd "$tmp" && timeout "$BUILD_TIMEOUT" go build -o "$dir/versitygw.tmp" ./cmd/versitygw) >&2
		mv "$dir/versitygw.tmp" "$dir/versitygw"
	fi
	echo "$dir/versitygw"
}

# start_server NAME: starts tessera in a fresh directory; sets ENDPOINT
# (http://host:port) and HOSTPORT.
start_server() {
	local dir="$WORK/data-$1" out="$WORK/server-$1.out"
	mkdir -p "$dir"
	TESSERA_ACCESS_KEY=$ACCESS_KEY TESSERA_SECRET_KEY=$SECRET_KEY \
		"$WORK/tessera" server "$dir" --address 127.0.0.1:0 --web-address 127.0.0.1:0 \
		--log-level warn >"$out" 2>"$WORK/server-$1.log" &
	SERVER_PID=$!
	for _ in $(seq 1 300); do
		if grep -q '^SecretKey:' "$out"; then break; fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server-$1.log"; exit 1; fi
		sleep 0.1
	done
	ENDPOINT=$(sed -n 's/^S3 endpoint: //p' "$out")
	HOSTPORT=${ENDPOINT#http://}
	if [ -z "$HOSTPORT" ] || [ "$(sed -n 's/^AccessKey: //p' "$out")" != "$ACCESS_KEY" ] ||
		[ "$(sed -n 's/^SecretKey: //p' "$out")" != "$SECRET_KEY" ]; then
		echo "tessera server did not start as expected:"; cat "$out" "$WORK/server-$1.log"; exit 1
	fi
}

stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill -INT "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=""
	fi
}

# run_minio_go TRAILING OUTPUT: runs every full-mode test; RUN_ON_FAIL=1 logs
# a failure and goes on instead of panicking at the first one. No KMS is set:
# the SSE-S3 tests run (ENABLE_KMS unset means on) and report what tessera
# answers; SSE-C tests run only over https.
run_minio_go() {
	(cd "$WORK" && env "${SUITE_ENV[@]}" SERVER_ENDPOINT="$HOSTPORT" ACCESS_KEY=$ACCESS_KEY \
		SECRET_KEY=$SECRET_KEY ENABLE_HTTPS=0 MINT_MODE=full RUN_ON_FAIL=1 MINT_TRAILING_HEADERS="$1" \
		timeout "$SUITE_TIMEOUT" "$MINIO_GO_BIN" >"$2" 2>"$2.stderr")
}

# run_versitygw OUTPUT [FLAGS...]: its IAM and ACL tests run `./versitygw
# admin ...` against the endpoint (a versitygw-only admin API), hence the
# directory.
run_versitygw() {
	local out=$1
	shift
	(cd "$(dirname "$VERSITYGW_BIN")" && env "${SUITE_ENV[@]}" timeout "$SUITE_TIMEOUT" ./versitygw test \
		-a "$ACCESS_KEY" -s "$SECRET_KEY" -e "$ENDPOINT" full-flow "$@" >"$out" 2>"$out.stderr")
}

echo "== conformance: building tessera and the suites (cache: $CACHE)"
t0=$(date +%s)
(cd "$ROOT" && go build -o "$WORK/tessera" .)
for suite in $SUITES; do
	case $suite in
	minio-go-*) MINIO_GO_BIN=${MINIO_GO_BIN:-$(build_minio_go)} ;;
	versitygw*) VERSITYGW_BIN=${VERSITYGW_BIN:-$(build_versitygw)} ;;
	*) echo "unknown suite $suite"; exit 2 ;;
	esac
done
echo "== conformance: built in $(( $(date +%s) - t0 ))s"

LAST="$CACHE/last-run"
rm -rf "$LAST"
mkdir -p "$LAST"
failed=0
SUMMARY=()
for suite in $SUITES; do
	out="$LAST/$suite.out"
	start_server "$suite"
	echo "== $suite against tessera at $ENDPOINT"
	t1=$(date +%s)
	set +e
	case $suite in
	minio-go-default) label="minio-go functional (default)"; format=minio-go; run_minio_go 0 "$out" ;;
	minio-go-trailing) label="minio-go functional (TrailingHeaders)"; format=minio-go; run_minio_go 1 "$out" ;;
	versitygw) label="versitygw full-flow"; format=versitygw; run_versitygw "$out" ;;
	versitygw-versioning) label="versitygw full-flow --versioning-enabled"; format=versitygw; run_versitygw "$out" --versioning-enabled ;;
	esac
	rc=$?
	set -e
	secs=$(( $(date +%s) - t1 ))
	stop_server
	cp "$WORK/server-$suite.log" "$LAST/$suite.server.log"
	# minio-go exits 0 however many tests fail (RUN_ON_FAIL); versitygw exits
	# 1 when any test failed. Anything else, or no closing tally from
	# versitygw, is a crash or a timeout: the tests after it never ran.
	crashed=0
	if [ $rc -eq 124 ]; then crashed=1; echo "$label: TIMEOUT after ${SUITE_TIMEOUT}s"
	elif [ "$format" = minio-go ] && [ $rc -ne 0 ]; then crashed=1
	elif [ "$format" = versitygw ] && { [ $rc -gt 1 ] || ! grep -q '^RAN: ' "$out"; }; then crashed=1
	fi
	if [ $crashed -eq 1 ]; then
		echo "$label: exited $rc before the end of the suite:"; tail -30 "$out.stderr"; failed=1
	fi
	trc=0
	tally=$(python3 "$CONF/tally.py" "$format" "$label" "$out" "$CONF/$suite.expected" "$LAST/$suite.failures") || trc=$?
	printf '%s\n' "$tally"
	[ $trc -eq 0 ] || failed=1
	SUMMARY+=("$(head -1 <<<"$tally"), ${secs}s")
done

echo "== conformance summary ($(( $(date +%s) - t0 ))s; outputs and failure lists in $LAST)"
printf '%s\n' "${SUMMARY[@]}"
exit $failed
