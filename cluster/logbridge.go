package cluster

import (
	"bytes"
	"log"

	"github.com/rs/zerolog"
)

// logBridge turns memberlist's std-log lines ("[DEBUG] memberlist: ...")
// into zerolog events. Everything goes out at debug level: memberlist
// reports routine failure handling (a probe to a dead node failing) as
// [ERR], and the Node logs the membership changes that matter itself.
// The original level is kept in the gossip_level field.
type logBridge struct {
	log zerolog.Logger
}

func newLogBridge(l zerolog.Logger) *logBridge {
	return &logBridge{log: l.With().Str("component", "gossip").Logger()}
}

// stdLogger returns a *log.Logger writing to the bridge, without
// timestamps (zerolog adds its own).
func (b *logBridge) stdLogger() *log.Logger { return log.New(b, "", 0) }

// Write implements io.Writer; log.Logger calls it once per line.
func (b *logBridge) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	level := ""
	if len(line) > 0 && line[0] == '[' {
		if end := bytes.IndexByte(line, ']'); end > 0 {
			level = string(line[1:end])
			line = bytes.TrimSpace(line[end+1:])
		}
	}
	line = bytes.TrimPrefix(line, []byte("memberlist: "))
	ev := b.log.Debug()
	if level != "" {
		ev = ev.Str("gossip_level", level)
	}
	ev.Msg(string(line))
	return len(p), nil
}
