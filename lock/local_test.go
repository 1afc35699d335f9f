package lock_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/lock/locktest"
	"github.com/hoistdev/hoist/transport"
)

// TestLocalTarget runs the conformance suite on the local target.
func TestLocalTarget(t *testing.T) {
	locktest.Run(t, locktest.Target{
		Dial: func(testing.TB) transport.Transport { return &transport.Local{} },
		Dir:  t.TempDir(),
	})
}

// TestLoggerRecordsEveryHostCommand: a Lock's Logger gets a record of the
// host's facts and of each host command, with its operation.
func TestLoggerRecordsEveryHostCommand(t *testing.T) {
	var buf bytes.Buffer
	l := lock.New(&transport.Local{}, lock.Root{Path: filepath.Join(t.TempDir(), "root")})
	l.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := l.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Runs(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Doctor(context.Background())
	for _, want := range []string{`msg="host facts" host=local`, `msg="host command" op=status host=local`,
		`msg="host command" op=runs host=local`, `msg="host command" op=doctor host=local`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, buf.String())
		}
	}
}
