#!/usr/bin/env bash
# Live read-scheduler benchmark: 10 `tessera peer` processes paced with
# --max-send-rate (homogeneous or mixed NICs) and 1 or 2 gateways on
# loopback, driven by `tessera bench` through every policy in turn.
#
#   scripts/sched-live.sh                      # homogeneous, 1 gateway
#   MIXED=1 GATEWAYS=2 scripts/sched-live.sh   # mixed NICs, 2 gateways
#
# Knobs (environment): GATEWAYS (1), MIXED (0), RATE (12.5e6 bytes/s per
# peer, a 100 Mbit/s NIC), DELAY (2ms per chunk), CODES (1+1,2+2,3+3,4+6:
# seed 000's (n,k) = (2,1), (4,2), (6,3), (10,4), object i in code i mod 4,
# as `tessera sim --objects N --codes ...` replays it; one code, e.g. 4+2,
# writes every object in the gateways' default code), POLICIES (all), RHO (0.5),
# BURSTS (10,100), REQUESTS (500), OBJECTS (100), BASE (19100, first port),
# FORMAT (table), TESSERA (binary; built if unset), KEEP (set: keep the
# temporary directory with data and logs), LOG_LEVEL (info; debug logs
# every pooled read, for scripts/pool-spread.py). Everything started is
# stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

GATEWAYS=${GATEWAYS:-1} MIXED=${MIXED:-0} RATE=${RATE:-12.5e6} DELAY=${DELAY:-2ms}
CODES=${CODES:-1+1,2+2,3+3,4+6}
RHO=${RHO:-0.5} BURSTS=${BURSTS:-10,100} REQUESTS=${REQUESTS:-500} OBJECTS=${OBJECTS:-100}
BASE=${BASE:-19100} FORMAT=${FORMAT:-table} POLICIES=${POLICIES:-}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ -n ${KEEP:-} ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

bin=${TESSERA:-}
if [[ -z $bin ]]; then
	bin=$work/tessera
	CGO_ENABLED=0 go build -o "$bin" .
fi

export TESSERA_ACCESS_KEY=schedbench TESSERA_SECRET_KEY=schedbench-secret-key
export TESSERA_CLUSTER_SECRET=schedbench-cluster-secret-0123456789

# rate_of I: peer I's send rate; with MIXED, peer 8 at 1/2 and peer 9 at 1/4.
rate_of() {
	if [[ $MIXED == 1 && $1 == 8 ]]; then python3 -c "print($RATE/2)"
	elif [[ $MIXED == 1 && $1 == 9 ]]; then python3 -c "print($RATE/4)"
	else echo "$RATE"; fi
}

# One storage class per code, EC<K><M>, when there are several.
classdefs=() classes=()
IFS=, read -ra codes <<<"$CODES"
if [[ ${#codes[@]} -gt 1 ]]; then
	for c in "${codes[@]}"; do
		classdefs+=(--storage-class "EC${c/+/}=$c")
		classes+=("EC${c/+/}")
	done
else
	classdefs+=(--ec "$CODES")
fi

endpoints=()
for g in $(seq 0 $((GATEWAYS - 1))); do
	join=()
	[[ $g -gt 0 ]] && join=(--join "127.0.0.1:$((BASE + 2))")
	"$bin" gateway --address "127.0.0.1:$((BASE + 10 * g))" --web-address "127.0.0.1:$((BASE + 10 * g + 1))" \
		--bind "127.0.0.1:$((BASE + 10 * g + 2))" --gossip-timing fast --fetch-pool 20 --web-public \
		--scan-interval 0 --log-format json --log-level "${LOG_LEVEL:-info}" "${classdefs[@]}" "${join[@]}" >"$work/gw$g.log" 2>&1 &
	pids+=($!)
	endpoints+=("127.0.0.1:$((BASE + 10 * g))")
done
total=0
for i in $(seq 0 9); do
	r=$(rate_of "$i")
	total=$(python3 -c "print($total + $r)")
	mkdir -p "$work/p$i"
	"$bin" peer "$work/p$i" --address "127.0.0.1:$((BASE + 100 + i))" --bind "127.0.0.1:$((BASE + 130 + i))" \
		--join "127.0.0.1:$((BASE + 2))" --gossip-timing fast --max-send-rate "$r" --chunk-delay "$DELAY" \
		>"$work/p$i.log" 2>&1 &
	pids+=($!)
done

# Wait for every gateway to hold the same settled ring epoch of all ten
# peers, so that no object is written before the layout it will be read
# under.
settled='.ring.epoch != null and .ring.peers == 10 and (.ring.moving | not)'
for _ in $(seq 1 300); do
	epochs=()
	for g in $(seq 0 $((GATEWAYS - 1))); do
		st=$(curl -fsS "http://127.0.0.1:$((BASE + 10 * g + 1))/api/status" 2>/dev/null || true)
		if [[ -n $st ]] && jq -e "$settled" >/dev/null <<<"$st"; then
			epochs+=("$(jq .ring.epoch <<<"$st")")
		fi
	done
	if [[ ${#epochs[@]} == "$GATEWAYS" && $(printf '%s\n' "${epochs[@]}" | sort -u | wc -l) == 1 ]]; then
		break
	fi
	sleep 0.2
done
[[ ${#epochs[@]} == "$GATEWAYS" ]] || { echo "the gateways never settled on one ring of 10 peers" >&2; tail -5 "$work"/*.log >&2; exit 1; }

gbps=$(python3 -c "print($total * 8 / 1e9)")
echo "# $GATEWAYS gateway(s), 10 peers at $RATE B/s$([[ $MIXED == 1 ]] && echo ' (peer 8 at 1/2, peer 9 at 1/4)'), chunk delay $DELAY, codes $CODES, aggregate $gbps Gbit/s" >&2
args=(--endpoint "$(IFS=,; echo "${endpoints[*]}")" --objects "$OBJECTS" --requests "$REQUESTS"
	--burst "$BURSTS" --rho "$RHO" --capacity-gbps "$gbps" --format "$FORMAT")
[[ -n $POLICIES ]] && args+=(--policies "$POLICIES")
[[ ${#classes[@]} -gt 0 ]] && args+=(--storage-classes "$(IFS=,; echo "${classes[*]}")")
"$bin" bench "${args[@]}"
