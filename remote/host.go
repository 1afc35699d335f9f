package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// ErrNoShell reports that the host could not run /bin/sh.
var ErrNoShell = errors.New("cannot run /bin/sh on the host; hoist needs a POSIX /bin/sh there")

// Host runs fragments on one host. It is safe for concurrent use.
type Host struct {
	t     transport.Transport
	mu    sync.Mutex
	facts *shellcmd.Facts
}

// New returns a Host over t.
func New(t transport.Transport) *Host { return &Host{t: t} }

// Name is the host as messages name it.
func (h *Host) Name() string { return h.t.Target() }

// Transport is the transport the host runs on.
func (h *Host) Transport() transport.Transport { return h.t }

// Facts returns the facts cached from an earlier command, or nil.
func (h *Host) Facts() *shellcmd.Facts {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.facts
}

// Call is one fragment to run.
type Call struct {
	// Fragment is the operation, from shellcmd.Render.
	Fragment shellcmd.Fragment
	// Stdin feeds the fragment's control channel: what follows the
	// fragment on the command's standard input, sent only once the host
	// has read the whole fragment (LOADED). Nil keeps it open and empty
	// until the command ends, so the host sees EOF only if this client
	// goes away.
	Stdin io.Reader
	// Stdout and Stderr receive the output that is not a verdict: a command
	// run under the lock, or a login script's noise. Nil collects it into
	// Reply.Noise instead.
	Stdout, Stderr io.Writer
	// OnVerdict, when set, is called for each verdict as it arrives.
	OnVerdict func(shellcmd.Verdict)
	// Opened, when set, is called once the command has its session on the
	// host, before the fragment is sent (transport.Request.Opened).
	Opened func()
	// Logger, when set, receives a debug record of the command: its
	// operation, duration (and round trips, when the transport knows its
	// round-trip time), exit status and verdict count, and of the facts
	// the host reports.
	Logger *slog.Logger
}

// Reply is what a fragment that ran to completion said.
type Reply struct {
	Status   int
	Verdicts []shellcmd.Verdict
	// Noise is the start of the output that was neither a verdict nor passed
	// through: what a login script or the shell printed. Used in errors.
	Noise string
}

// Last returns the final verdict, or a zero Verdict.
func (r *Reply) Last() shellcmd.Verdict {
	if len(r.Verdicts) == 0 {
		return shellcmd.Verdict{}
	}
	return r.Verdicts[len(r.Verdicts)-1]
}

// Exec runs c on the host. The error wraps transport.ErrUnknownOutcome when
// contact was lost before the exit status arrived (verdicts seen so far are
// in the reply), transport.ErrNotStarted when nothing ran, ErrNoShell, or
// shellcmd.ErrVerdict when a verdict did not parse or is not one the
// operation says.
func (h *Host) Exec(ctx context.Context, c Call) (*Reply, error) {
	marker := newMarker()
	facts := h.Facts()
	script := c.Fragment.Script(marker, facts)
	op := c.Fragment.Op
	in := newFeed(script, c.Stdin)
	defer in.finish()

	reply := &Reply{}
	var noise limitedBuffer
	var vmu sync.Mutex
	var bad error
	onLine := func(text string) {
		v, err := shellcmd.ParseVerdict(text)
		vmu.Lock()
		defer vmu.Unlock()
		if err == nil && op != nil && !op.Allows(v.Verb) {
			err = fmt.Errorf("%w: %s does not say %q", shellcmd.ErrVerdict, op.Name, text)
		}
		if err != nil {
			if bad == nil {
				bad = err
			}
			return
		}
		switch v.Verb {
		case shellcmd.VerbLoaded:
			in.loaded()
			return
		case shellcmd.VerbFacts:
			h.cacheFacts(v, c.Logger)
			return
		}
		reply.Verdicts = append(reply.Verdicts, v)
		if c.OnVerdict != nil {
			c.OnVerdict(v)
		}
	}
	stdout, stderr := c.Stdout, c.Stderr
	if stdout == nil {
		stdout = &noise
	}
	if stderr == nil {
		stderr = &noise
	}
	dm := newDemux(marker, stdout, onLine)
	begin := time.Now()
	defer func() { h.log(c.Logger, op, begin, reply, len(script)) }()
	status, err := h.t.Run(ctx, transport.Request{
		Command: Loader,
		Stdin:   in,
		Stdout:  dm,
		Stderr:  stderr,
		Opened:  c.Opened,
	})
	derr := dm.Close()
	vmu.Lock()
	defer vmu.Unlock()
	reply.Status = status
	reply.Noise = noise.String()
	switch {
	case err != nil:
		return reply, err
	case bad != nil:
		return reply, bad
	case derr != nil:
		return reply, fmt.Errorf("%w: %v", shellcmd.ErrVerdict, derr)
	case len(reply.Verdicts) == 0 && (status == 126 || status == 127):
		return reply, fmt.Errorf("%w (exit %d: %s)", ErrNoShell, status, reply.NoiseLine())
	}
	return reply, nil
}

// log records one host command on logger.
func (h *Host) log(logger *slog.Logger, op *shellcmd.Op, begin time.Time, r *Reply, size int) {
	if logger == nil {
		return
	}
	took := time.Since(begin)
	attrs := []any{"host", h.Name(), "took", took.Round(time.Millisecond), "status", r.Status,
		"verdicts", len(r.Verdicts), "fragment_bytes", size}
	if op != nil {
		attrs = append([]any{"op", op.Name}, attrs...)
	}
	if rt, ok := h.t.(interface{ RTT() time.Duration }); ok && rt.RTT() > 0 {
		attrs = append(attrs, "round_trips", fmt.Sprintf("%.1f", float64(took)/float64(rt.RTT())))
	}
	logger.Debug("host command", attrs...)
}

func (h *Host) cacheFacts(v shellcmd.Verdict, logger *slog.Logger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := v.Facts()
	h.facts = &f
	if logger != nil {
		logger.Debug("host facts", "host", h.Name(), "machine", f.Machine, "boot_id", f.BootID, "pidns", f.PIDNS,
			"init", f.Init, "stat", f.Stat, "poll", f.Nap, "uid", f.UID, "home", f.Home)
	}
}

// newMarker is unique per exec, so no output can forge a verdict by accident.
func newMarker() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return "@hoist:" + hex.EncodeToString(b[:])
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4096 - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// NoiseLine is the first line of Noise, for an error message.
func (r *Reply) NoiseLine() string {
	s := strings.TrimSpace(r.Noise)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no output"
	}
	return s
}
