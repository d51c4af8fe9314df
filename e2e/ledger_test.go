package e2e

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
)

// outcome is what a client knows of an operation once its call returned.
type outcome int

const (
	acked   outcome = iota // 2xx: it happened
	refused                // 4xx, or never sent: it did not happen
	unknown                // 5xx, timeout, broken connection: it may have
)

// classify turns a client error into an outcome. A 5xx is ambiguous: a
// write can have committed on its quorum before the reply was lost.
func classify(err error) outcome {
	if err == nil {
		return acked
	}
	if s := minio.ToErrorResponse(err).StatusCode; s >= 400 && s < 500 {
		return refused
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return refused
	}
	return unknown
}

// keyState is a key's content: absent, or the SHA-256 of its bytes.
type keyState struct {
	present bool
	sum     [32]byte
}

var absent = keyState{}

func contentState(b []byte) keyState { return keyState{present: true, sum: sha256.Sum256(b)} }

func (s keyState) String() string {
	if !s.present {
		return "absent"
	}
	return fmt.Sprintf("%x", s.sum[:4])
}

// ledgerOp is one PUT (to state) or DELETE (state absent) and its outcome.
type ledgerOp struct {
	state   keyState
	outcome outcome
}

// ledger records every write issued against a key space. Each key has one
// writer at a time, so a key's operations are in the order they ran.
type ledger struct {
	mu   sync.Mutex
	keys map[string][]ledgerOp
}

func newLedger() *ledger { return &ledger{keys: map[string][]ledgerOp{}} }

func (l *ledger) record(key string, state keyState, o outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys[key] = append(l.keys[key], ledgerOp{state: state, outcome: o})
}

// allowed is what key may hold now: the state of its last acknowledged
// write (absent before any), or that of any later write whose outcome is
// unknown.
func (l *ledger) allowed(key string) []keyState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return allowedStates(l.keys[key])
}

func allowedStates(ops []ledgerOp) []keyState {
	out := []keyState{absent}
	for _, op := range ops {
		switch op.outcome {
		case acked:
			out = []keyState{op.state}
		case unknown:
			out = append(out, op.state)
		}
	}
	return out
}

// everWritten reports whether s is the state of some PUT of key.
func (l *ledger) everWritten(key string, s keyState) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, op := range l.keys[key] {
		if op.state == s {
			return true
		}
	}
	return false
}

func (l *ledger) keyList() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.keys))
	for k := range l.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// counts of the ledger's operations by outcome.
func (l *ledger) counts() (ack, ref, unk int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ops := range l.keys {
		for _, op := range ops {
			switch op.outcome {
			case acked:
				ack++
			case refused:
				ref++
			case unknown:
				unk++
			}
		}
	}
	return
}

// verdict is how one observation of a key compares with the ledger.
type verdict int

const (
	vOK verdict = iota
	vLost
	vWrong
	vResurrected
	vUnreadable
)

var verdictNames = [...]string{"ok", "lost", "wrong", "resurrected", "unreadable"}

// judge compares what a read saw (err: it failed otherwise than 404) with
// what the ledger allows.
func (l *ledger) judge(key string, seen keyState, err error) verdict {
	if err != nil {
		return vUnreadable
	}
	allowed := l.allowed(key)
	for _, s := range allowed {
		if s == seen {
			return vOK
		}
	}
	switch {
	case !seen.present:
		return vLost
	case len(allowed) == 1 && !allowed[0].present && l.everWritten(key, seen):
		return vResurrected
	default:
		return vWrong
	}
}

// tally counts verdicts and keeps the first few that are not ok.
type tally struct {
	mu    sync.Mutex
	n     [len(verdictNames)]int
	first []string
}

func (ta *tally) add(v verdict, format string, args ...any) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	ta.n[v]++
	if v != vOK && len(ta.first) < 10 {
		ta.first = append(ta.first, verdictNames[v]+": "+fmt.Sprintf(format, args...))
	}
}

func (ta *tally) get(v verdict) int {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	return ta.n[v]
}

func (ta *tally) String() string {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	var parts []string
	for i, name := range verdictNames {
		parts = append(parts, fmt.Sprintf("%d %s", ta.n[i], name))
	}
	return strings.Join(parts, ", ")
}

// logFirst logs the first failures kept.
func (ta *tally) logFirst(t testing.TB) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	for _, f := range ta.first {
		t.Log("  " + f)
	}
}

// TestLedgerVerdicts pins down what the ledger allows a key to hold.
func TestLedgerVerdicts(t *testing.T) {
	a, b, c := contentState([]byte("a")), contentState([]byte("b")), contentState([]byte("c"))
	errRead := errors.New("503")
	tests := []struct {
		name string
		ops  []ledgerOp
		seen keyState
		err  error
		want verdict
	}{
		{"never written, absent", nil, absent, nil, vOK},
		{"acked put read back", []ledgerOp{{a, acked}}, a, nil, vOK},
		{"acked put gone", []ledgerOp{{a, acked}}, absent, nil, vLost},
		{"overwrite lost to the old version", []ledgerOp{{a, acked}, {b, acked}}, a, nil, vWrong},
		{"refused overwrite leaves the old", []ledgerOp{{a, acked}, {b, refused}}, a, nil, vOK},
		{"refused overwrite must not show", []ledgerOp{{a, acked}, {b, refused}}, b, nil, vWrong},
		{"unknown overwrite may show", []ledgerOp{{a, acked}, {b, unknown}}, b, nil, vOK},
		{"unknown overwrite may not show", []ledgerOp{{a, acked}, {b, unknown}}, a, nil, vOK},
		{"unknown then acked: only the acked", []ledgerOp{{a, acked}, {b, unknown}, {c, acked}}, b, nil, vWrong},
		{"acked delete comes back", []ledgerOp{{a, acked}, {absent, acked}}, a, nil, vResurrected},
		{"unknown delete may have happened", []ledgerOp{{a, acked}, {absent, unknown}}, absent, nil, vOK},
		{"bytes never written", []ledgerOp{{absent, acked}}, c, nil, vWrong},
		{"read error", []ledgerOp{{a, acked}}, absent, errRead, vUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			for _, op := range tt.ops {
				l.record("k", op.state, op.outcome)
			}
			if got := l.judge("k", tt.seen, tt.err); got != tt.want {
				t.Errorf("judge = %s, want %s", verdictNames[got], verdictNames[tt.want])
			}
		})
	}
}
