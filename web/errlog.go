package web

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// ErrorLog is a zerolog hook keeping the last few warn-or-worse events for
// the status page. A hook sees the level and message, not the fields, so
// the page shows what happened, and the node's log has the details. Safe
// for concurrent use; attach it with logger.Hook(errlog).
type ErrorLog struct {
	mu    sync.Mutex
	lines []LogLine
	next  int
	full  bool
	now   func() time.Time
}

// NewErrorLog keeps the last n events (at least 1).
func NewErrorLog(n int) *ErrorLog {
	if n < 1 {
		n = 1
	}
	return &ErrorLog{lines: make([]LogLine, n), now: time.Now}
}

// For returns a hook recording into l with the given source (a node or
// component name), for the page to say where an event came from.
func (l *ErrorLog) For(source string) zerolog.Hook { return sourceHook{l: l, source: source} }

type sourceHook struct {
	l      *ErrorLog
	source string
}

func (h sourceHook) Run(_ *zerolog.Event, level zerolog.Level, msg string) {
	h.l.record(h.source, level, msg)
}

// Run records events at warn level and above.
func (l *ErrorLog) Run(_ *zerolog.Event, level zerolog.Level, msg string) { l.record("", level, msg) }

func (l *ErrorLog) record(source string, level zerolog.Level, msg string) {
	if level < zerolog.WarnLevel || level == zerolog.NoLevel || level == zerolog.Disabled {
		return
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines[l.next] = LogLine{Time: l.now().UTC(), Level: level.String(), Source: source, Message: msg}
	l.next = (l.next + 1) % len(l.lines)
	if l.next == 0 {
		l.full = true
	}
}

// Recent returns the recorded events, oldest first.
func (l *ErrorLog) Recent() []LogLine {
	if l == nil {
		return []LogLine{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full {
		return append([]LogLine{}, l.lines[:l.next]...)
	}
	return append(append([]LogLine{}, l.lines[l.next:]...), l.lines[:l.next]...)
}
