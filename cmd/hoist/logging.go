package main

import (
	"io"
	"log/slog"
)

// newLogger is -v: log/slog records, as text on stderr, one per line
// (values with line breaks or control characters are quoted by the
// handler). -v logs at debug level; -q raises the level to warnings. The
// transport and remote log only when -v gives them the logger (see
// wireLogger).
func newLogger(w io.Writer, verbose, quiet bool) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case quiet:
		level = slog.LevelWarn
	case verbose:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// hostLogger is the logger handed to the transport and to remote: only
// with -v, since a logger makes the transport measure the round-trip time
// (one keepalive request) and every host command log its record.
func (a *app) hostLogger() *slog.Logger {
	if a.g.verbose && !a.g.quiet {
		return a.log
	}
	return nil
}
