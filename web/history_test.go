package web

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestRecorder(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	at := func(i int) time.Time { return time.Unix(int64(1000+i), 0) }
	r := newRecorder(4, time.Second)
	for i := 0; i < 6; i++ {
		st := Status{Time: at(i), Nodes: []Node{{ID: "a", ThroughputSend: f(float64(i))}}}
		if i >= 3 {
			st.Nodes = append(st.Nodes, Node{ID: "late", ThroughputRecv: f(float64(10 * i))})
		}
		if i == 5 {
			st.Scheduler.GetP99 = f(0.5)
		}
		r.add(st)
	}
	h := r.snapshot()
	if len(h.Times) != 4 || h.Times[0] != at(2).UnixMilli() || h.Times[3] != at(5).UnixMilli() {
		t.Fatalf("times %v: want the last 4 samples", h.Times)
	}
	if got := h.Nodes["a"].Send; len(got) != 4 || *got[0] != 2 || *got[3] != 5 {
		t.Errorf("a.send = %v, want 2..5", deref(got))
	}
	late := h.Nodes["late"].Recv
	if len(late) != 4 || late[0] != nil || late[1] == nil || *late[1] != 30 {
		t.Errorf("late.recv = %v, want [nil 30 40 50]", deref(late))
	}
	if h.GetP99[3] == nil || *h.GetP99[3] != 0.5 || h.GetP99[2] != nil {
		t.Errorf("p99 = %v", deref(h.GetP99))
	}
	// A node that disappears is kept while it has samples, then dropped.
	for i := 6; i < 11; i++ {
		r.add(Status{Time: at(i)})
	}
	if _, ok := r.snapshot().Nodes["a"]; ok {
		t.Error("node gone for longer than the history is still listed")
	}
}

func deref(s []*float64) []any {
	out := make([]any, len(s))
	for i, v := range s {
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

func TestErrorLog(t *testing.T) {
	l := NewErrorLog(3)
	log := zerolog.New(io.Discard).Level(zerolog.TraceLevel).Hook(l)
	log.Debug().Msg("d")
	log.Info().Msg("i")
	log.Warn().Msg("w1")
	log.Error().Str("k", "v").Msg("e1")
	log.WithLevel(zerolog.NoLevel).Msg("nolevel")
	if got := msgs(l.Recent()); got != "w1,e1" {
		t.Errorf("recent = %s, want w1,e1", got)
	}
	log.Warn().Msg("w2")
	log.Error().Msg("e2")
	if got := msgs(l.Recent()); got != "e1,w2,e2" {
		t.Errorf("recent after wrap = %s, want e1,w2,e2", got)
	}
	peerLog := zerolog.New(io.Discard).Hook(l.For("peer7"))
	peerLog.Warn().Msg("w3")
	if r := l.Recent(); r[2].Source != "peer7" || r[2].Message != "w3" || r[1].Source != "" {
		t.Errorf("sources: %+v", r)
	}
	var nilLog *ErrorLog
	if r := nilLog.Recent(); r == nil || len(r) != 0 {
		t.Errorf("nil ErrorLog: %v, want empty", r)
	}
}

func msgs(ls []LogLine) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Message)
	}
	return strings.Join(out, ",")
}
