package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfiguredIdentityFileIsNotReplacedByDefaults: when the OpenSSH
// configuration names identity files and none of them can be used, the
// default keys are not offered in their place (ssh offers none of them
// either), and the error and the debug log name each configured file with
// why it was not used. Not parallel: it sets HOME.
func TestConfiguredIdentityFileIsNotReplacedByDefaults(t *testing.T) {
	as, base := newAuthServer(t, 6)
	home := t.TempDir()
	t.Setenv("HOME", home)
	// A default key the host accepts: offering it would log in.
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	_, pub := as.key(t, filepath.Join(home, ".ssh"), "id_ed25519", "")
	as.authorize(pub)
	dir := t.TempDir()
	missing, garbage, cert := filepath.Join(dir, "missing"), filepath.Join(dir, "garbage"), filepath.Join(dir, "missing-cert.pub")
	must(t, os.WriteFile(garbage, []byte("not a key\n"), 0o600))
	host, port, _ := net.SplitHostPort(as.addr)
	cfgFile := filepath.Join(dir, "config")
	resolve := func(t *testing.T, lines ...string) (SSHConfig, *bytes.Buffer) {
		t.Helper()
		body := fmt.Sprintf("Host box\n  HostName %s\n  Port %s\n  User tester\n", host, port)
		must(t, os.WriteFile(cfgFile, []byte(body+"  "+strings.Join(lines, "\n  ")+"\n"), 0o600))
		cfg := SSHConfig{NoAgent: true, KnownHostsFile: base.KnownHostsFile, KeepaliveInterval: -1}
		var log bytes.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		must(t, ResolveTarget(context.Background(), "box", ConfigOptions{File: cfgFile}, &cfg))
		return cfg, &log
	}
	for _, c := range []struct {
		lines []string
		want  []string
	}{
		{[]string{"IdentityFile " + missing, "CertificateFile " + cert}, []string{missing + " (no such file)", cert + " (no such file)"}},
		{[]string{"IdentityFile " + missing, "IdentityFile " + garbage}, []string{missing + " (no such file)", garbage + " (not a usable private key"}},
	} {
		cfg, log := resolve(t, c.lines...)
		err := dialErrFor(t, cfg)
		wantOffered(t, as)
		if !errors.Is(err, ErrAuth) {
			t.Fatalf("%q: DialSSH: %v, want ErrAuth", c.lines, err)
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
			if !strings.Contains(log.String(), want) {
				t.Errorf("the debug log does not say %q:\n%s", want, log.String())
			}
		}
		checkMessage(t, err, "box")
	}

	// A configured file that exists is offered, and the default key still
	// is not.
	good, goodPub := as.key(t, dir, "good", "")
	as.authorize(goodPub)
	cfg, _ := resolve(t, "IdentityFile "+missing, "IdentityFile "+good)
	s, err := DialSSH(context.Background(), cfg)
	if err != nil {
		t.Fatalf("DialSSH with a configured key that exists: %v", err)
	}
	defer s.Close()
	wantOffered(t, as, "good")
	if got := s.Reached().Identities; len(got) != 2 || got[0] != missing || got[1] != good {
		t.Errorf("Reached().Identities %q, want %s and %s", got, missing, good)
	}
}
