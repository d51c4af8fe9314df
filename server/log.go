package server

import (
	"log"
	"strings"

	"github.com/rs/zerolog"
)

// zerologStd adapts a zerolog logger for net/http's ErrorLog, at debug level:
// those lines are client disconnects and TLS noise, not operator news.
func zerologStd(l zerolog.Logger) *log.Logger {
	return log.New(lineWriter{l}, "", 0)
}

type lineWriter struct{ l zerolog.Logger }

func (w lineWriter) Write(p []byte) (int, error) {
	w.l.Debug().Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
