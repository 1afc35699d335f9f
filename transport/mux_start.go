package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// Starting a master (docs/connections.md, "Starting"): the command that
// starts it and the master talk over a socket pair, the master's fd 3, in
// JSON lines, until the master listens.

// startMsg is one line of the startup conversation.
type startMsg struct {
	// command → master
	Spec    json.RawMessage `json:"spec,omitempty"`    // first: what to build the configuration from
	Verbose bool            `json:"verbose,omitempty"` // with the spec: relay the debug log
	CanAsk  bool            `json:"can_ask,omitempty"` // with the spec: passphrases can be asked for
	Answer  []byte          `json:"answer,omitempty"`  // a passphrase
	Refused string          `json:"refused,omitempty"` // none was given

	// master → command
	Log   *logLine   `json:"log,omitempty"`
	Ask   string     `json:"ask,omitempty"` // the passphrase of this identity file
	Ready bool       `json:"ready,omitempty"`
	Taken bool       `json:"taken,omitempty"` // another master linked first
	Fail  *wireError `json:"fail,omitempty"`
}

type logLine struct {
	Msg   string   `json:"msg"`
	Attrs []string `json:"attrs,omitempty"` // key, value, ...
}

// StartMaster starts cmd as the master for cfg and waits until it listens
// at cfg.Control.Socket(). cmd is a program that calls ServeMaster (hoist
// runs itself as "hoist mux serve"); it runs in a session of its own, its
// standard input, output and error on /dev/null, and spec is what
// ServeMaster hands to its build function. Meanwhile the master's debug
// log goes to cfg.Logger and cfg.Passphrase answers the master's questions.
//
// The error is the master's dial error (DialSSH's, as it returned it),
// ErrMasterTaken when another master linked its socket first, ctx.Err()
// when ctx ended (the master is killed then), or another error when it
// could not start or listen.
func StartMaster(ctx context.Context, cfg SSHConfig, cmd *exec.Cmd, spec []byte) error {
	// Both ends close on exec, under the fork lock, so that no other
	// process started meanwhile (another target's master) holds an end:
	// the conversation must end when the master does. cmd.ExtraFiles
	// passes theirs on regardless.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "master startup"), os.NewFile(uintptr(fds[1]), "startup")
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return err
	}
	go func() { _ = cmd.Wait() }()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() {
		_ = cmd.Process.Kill()
		conn.Close()
	})
	defer stop()
	enc, dec := json.NewEncoder(conn), json.NewDecoder(conn)
	if err := enc.Encode(startMsg{Spec: spec, Verbose: cfg.Logger != nil, CanAsk: cfg.Passphrase != nil}); err != nil {
		return err
	}
	for {
		var m startMsg
		if err := dec.Decode(&m); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.New("the master exited before it listened")
		}
		switch {
		case m.Log != nil:
			if cfg.Logger != nil {
				args := make([]any, len(m.Log.Attrs))
				for i, a := range m.Log.Attrs {
					args[i] = a
				}
				cfg.Logger.Debug(m.Log.Msg, args...)
			}
		case m.Ask != "":
			var reply startMsg
			if cfg.Passphrase == nil {
				reply.Refused = "no terminal to ask on"
			} else if pw, err := cfg.Passphrase(m.Ask); err != nil {
				reply.Refused = err.Error()
			} else {
				reply.Answer = pw
			}
			if err := enc.Encode(reply); err != nil {
				return err
			}
		case m.Ready:
			return nil
		case m.Taken:
			return ErrMasterTaken
		case m.Fail != nil:
			return m.Fail.decode()
		}
	}
}

// ServeMaster is the master process (docs/connections.md, "The master"):
// it reads from the command that started it (StartMaster, on fd 3) what
// build needs to make the configuration, dials with it (build fills in
// cfg: Target, the flags, and ResolveTarget; cfg's Logger and Passphrase
// reach the starting command), listens at cfg.Control.Socket(), and
// serves until the master ends: no client for ControlPersist, stopped,
// told to exit, SIGTERM or SIGINT, or the connection lost. version is the
// hoist version, for hoist mux check. It returns why the master ended.
func ServeMaster(build func(ctx context.Context, spec []byte, cfg *SSHConfig) error, version string) (string, error) {
	f := os.NewFile(3, "startup")
	conn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("hoist mux serve is started by hoist itself, not by hand: %w", err)
	}
	defer conn.Close()
	st := &startup{enc: json.NewEncoder(conn), dec: json.NewDecoder(conn)}
	var first startMsg
	if err := st.dec.Decode(&first); err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP)
	var cfg SSHConfig
	if first.Verbose {
		cfg.Logger = slog.New(st)
	}
	if first.CanAsk {
		cfg.Passphrase = st.ask
	}
	fail := func(err error) (string, error) {
		st.send(startMsg{Fail: encodeError(err)})
		return "", err
	}
	if err := build(ctx, first.Spec, &cfg); err != nil {
		return fail(err)
	}
	path := cfg.Control.Socket()
	if path == "" {
		return fail(errors.New("the configuration names no ControlPath"))
	}
	up, err := DialSSH(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	ln, fi, err := bindMaster(path)
	if errors.Is(err, ErrMasterTaken) {
		up.Close()
		st.send(startMsg{Taken: true})
		return "another master listens at " + path, nil
	}
	if err != nil {
		up.Close()
		return fail(err)
	}
	m, err := newMaster(up, ln, path, fi, cfg.Control.Persist, version)
	if err != nil {
		ln.Close()
		removeIfSame(path, fi)
		up.Close()
		return fail(err)
	}
	st.send(startMsg{Ready: true})
	st.close()
	conn.Close()
	_ = os.Chdir("/")
	go func() {
		if s, ok := <-sigs; ok {
			m.end("ended by " + s.String())
		}
	}()
	return m.serve(), nil
}

// startup is the master's end of the conversation; as a slog.Handler it
// sends the master's debug log to the starting command.
type startup struct {
	mu     sync.Mutex
	enc    *json.Encoder
	dec    *json.Decoder
	closed bool
}

func (s *startup) send(m startMsg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_ = s.enc.Encode(m)
	}
}

func (s *startup) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// ask asks the starting command for the passphrase of file.
func (s *startup) ask(file string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("nobody to ask")
	}
	if err := s.enc.Encode(startMsg{Ask: file}); err != nil {
		return nil, err
	}
	var m startMsg
	if err := s.dec.Decode(&m); err != nil {
		return nil, err
	}
	if m.Refused != "" {
		return nil, errors.New(m.Refused)
	}
	return m.Answer, nil
}

func (s *startup) Enabled(context.Context, slog.Level) bool { return true }

func (s *startup) Handle(_ context.Context, r slog.Record) error {
	l := &logLine{Msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		l.Attrs = append(l.Attrs, a.Key, a.Value.String())
		return true
	})
	s.send(startMsg{Log: l})
	return nil
}

func (s *startup) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *startup) WithGroup(string) slog.Handler      { return s }
