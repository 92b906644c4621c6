package netloop

import (
	"fmt"
	"log/slog"
)

// gnetLogger routes gnet's own logging into slog. gnet logs a banner and
// per-loop chatter at info and debug level; those are dropped so the
// broker's log stays one line per event. Warnings and errors are kept.
type gnetLogger struct{ log *slog.Logger }

func (gnetLogger) Debugf(string, ...any) {}
func (gnetLogger) Infof(string, ...any)  {}

func (g gnetLogger) Warnf(format string, args ...any) {
	g.log.Warn("netloop: gnet: " + fmt.Sprintf(format, args...))
}

func (g gnetLogger) Errorf(format string, args ...any) {
	g.log.Error("netloop: gnet: " + fmt.Sprintf(format, args...))
}

// Fatalf is logged as an error: a library must not end the process.
func (g gnetLogger) Fatalf(format string, args ...any) {
	g.log.Error("netloop: gnet (fatal): " + fmt.Sprintf(format, args...))
}
