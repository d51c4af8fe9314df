# Shared helpers for the client suites: check NAME CMD... runs CMD, records
# a pass or a failure with its output, and goes on; finish prints the tally
# and fails when anything failed.
PASSED=0
FAILED=0
FAILURES=()

check() {
	local name=$1
	shift
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		PASSED=$((PASSED + 1))
		echo "ok   $name"
	else
		FAILED=$((FAILED + 1))
		FAILURES+=("$name")
		echo "FAIL $name (exit $rc)"
		echo "$out" | tail -20 | sed 's/^/     | /'
	fi
}

# expect_fail NAME PATTERN CMD...: CMD must fail and its output match PATTERN.
expect_fail() {
	local name=$1 pattern=$2
	shift 2
	local out
	if out=$("$@" 2>&1); then
		FAILED=$((FAILED + 1))
		FAILURES+=("$name")
		echo "FAIL $name (succeeded, expected $pattern)"
	elif grep -q -- "$pattern" <<<"$out"; then
		PASSED=$((PASSED + 1))
		echo "ok   $name"
	else
		FAILED=$((FAILED + 1))
		FAILURES+=("$name")
		echo "FAIL $name (expected $pattern)"
		echo "$out" | tail -20 | sed 's/^/     | /'
	fi
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

# same FILE_A FILE_B: byte-identical files.
same() { cmp "$1" "$2"; }

# same_tree DIR_A DIR_B: identical relative paths and contents.
same_tree() { diff -r "$1" "$2"; }

# equals EXPECTED ACTUAL
equals() {
	if [ "$1" != "$2" ]; then
		echo "expected [$1], got [$2]"
		return 1
	fi
}

# make_tree DIR N: N small files with distinct contents in a few subdirectories.
make_tree() {
	local dir=$1 n=$2 i
	mkdir -p "$dir"
	for i in $(seq 1 "$n"); do
		mkdir -p "$dir/d$((i % 7))"
		printf 'file %d %s\n' "$i" "$RANDOM$RANDOM" >"$dir/d$((i % 7))/f$i.txt"
	done
}

curl_opts() {
	if [ "${SCHEME:-http}" = https ]; then echo "--cacert $CERT"; fi
}
export -f equals same same_tree
