package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// logFlags are the logging flags of the roles that log.
type logFlags struct {
	level  string
	format string
}

func (c *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.level, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.format, "log-format", "text", "log format: text (coloured only on a terminal; console is the same) or json")
}

// logger builds the root logger writing to w. Text is coloured only when
// tty says w is a terminal (and NO_COLOR is unset): escape codes in a
// file or `docker logs` are noise.
func (c *logFlags) logger(w io.Writer, tty bool) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(c.level)
	if err != nil || c.level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.level)
	}
	switch c.format {
	case "text", "console":
		_, noColor := os.LookupEnv("NO_COLOR")
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, NoColor: !tty || noColor}
	case "json":
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format %q: want text or json", c.format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// maxHeld bounds what heldWriter keeps: past it, the log flows again, so
// a start at debug level cannot hold memory without end.
const maxHeld = 1 << 20

// heldWriter holds what is written to it until release, then passes every
// write through. `tessera server` logs into one while it starts, so its
// banner (endpoint, status page, keys) comes first on the terminal, with
// the start-up log after it.
type heldWriter struct {
	mu       sync.Mutex
	w        io.Writer
	buf      []byte
	released bool
}

func newHeldWriter(w io.Writer) *heldWriter { return &heldWriter{w: w} }

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return h.w.Write(p)
	}
	h.buf = append(h.buf, p...)
	if len(h.buf) > maxHeld {
		h.flush()
	}
	return len(p), nil
}

// release writes what was held and lets later writes through. Safe to
// call more than once.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flush()
}

func (h *heldWriter) flush() {
	if !h.released {
		_, _ = h.w.Write(h.buf)
		h.buf, h.released = nil, true
	}
}
