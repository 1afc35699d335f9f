package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNoOpenSSH: a configuration file must be read, and OpenSSH's ssh, which
// hoist asks to resolve it (ssh -G), is not installed.
var ErrNoOpenSSH = errors.New("reading an OpenSSH configuration needs OpenSSH's ssh (ssh -G); install openssh-client")

// Resolved is the configuration OpenSSH resolved for one host: every
// keyword, in lower case, with its values (ssh -G prints one line per
// value for IdentityFile, CertificateFile and the like).
type Resolved map[string][]string

// Get is a keyword's first value, "" when it has none.
func (r Resolved) Get(key string) string {
	if v := r[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// ResolveConfig asks OpenSSH how it would connect to host: ssh -G applies
// Host and Match blocks, Include, negation, canonicalization and the
// command line's options exactly as ssh itself does. When ssh is not
// installed, only a host without any configuration to read resolves (to
// OpenSSH's defaults); otherwise the error is ErrNoOpenSSH.
func ResolveConfig(ctx context.Context, host string, o ConfigOptions) (Resolved, error) {
	if strings.HasPrefix(host, "-") {
		return nil, fmt.Errorf("%q is not a host name", host)
	}
	args := []string{"-G"}
	if o.File != "" {
		args = append(args, "-F", o.File)
	}
	args = append(args, o.argv("", "")...)
	args = append(args, "--", host)
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		if needsOpenSSH(o) {
			return nil, ErrNoOpenSSH
		}
		return defaults(host, o), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ssh, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("the OpenSSH configuration for %s: %s", host, msg)
	}
	r := Resolved{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		k = strings.ToLower(k)
		r[k] = append(r[k], v)
	}
	if r.Get("hostname") == "" {
		return nil, fmt.Errorf("the OpenSSH configuration for %s: ssh -G printed no hostname", host)
	}
	return r, nil
}

// ResolveTarget resolves a target as ssh would ([user@]host[:port] or an
// ssh:// URI, whose user and port count as given at o.TargetAt) and
// applies the result to cfg; cfg.Name keeps the target as given, for
// messages.
func ResolveTarget(ctx context.Context, target string, o ConfigOptions, cfg *SSHConfig) error {
	t, err := parseTarget(target)
	if err != nil {
		return err
	}
	// %h, %n and %r go into ProxyCommand and Match exec, which a shell
	// runs on this machine: a name from a hosts file must not be able to
	// run anything there (OpenSSH refuses the same characters).
	if err := checkName("host name", t.host); err != nil {
		return fmt.Errorf("target %q: %w", RedactTarget(target), err)
	}
	if err := checkName("user name", t.user); err != nil {
		return fmt.Errorf("target %q: %w", RedactTarget(target), err)
	}
	if err := o.checkUsers(); err != nil {
		return err
	}
	// The target's user and port stand where it stood on the command
	// line: ssh takes the first of -o User=, -l and user@ given, and so of
	// the ports.
	user, port := "", ""
	if strings.Contains(target, "@") {
		user = t.user
	}
	if explicitPort(target) {
		port = t.port
	}
	o = ConfigOptions{File: o.File, Args: o.argv(user, port)}
	r, err := ResolveConfig(ctx, t.host, o)
	if err != nil {
		return err
	}
	if err := r.Apply(cfg, t.host, o); err != nil {
		return err
	}
	if r.Get("hostname") != t.host {
		cfg.Name = RedactTarget(target)
	}
	return nil
}

// Apply sets what the resolved configuration says on cfg, for the host
// that was asked for as original: the target, identities, the agent, host
// key checking, timeouts and keepalives, and ProxyJump or ProxyCommand as
// cfg.Dialer (jump hosts are resolved and dialled with opts in turn). What
// cfg already sets from hoist's own flags (identity files, known_hosts
// file, accepting new keys) is kept in front.
func (r Resolved) Apply(cfg *SSHConfig, original string, opts ConfigOptions) error {
	// Jump hosts start from hoist's own flags, not from this host's
	// configuration.
	base := *cfg
	host, port, usr := r.Get("hostname"), r.Get("port"), r.Get("user")
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	cfg.Target = host + ":" + port
	if usr != "" && cfg.User == "" {
		cfg.User = usr
	}
	tok := tokens{r, original}
	// Every file the configuration names is kept, found or not: ssh offers
	// what it finds of them and never falls back to the default keys.
	if ids := r["identityfile"]; len(cfg.IdentityFiles) == 0 && !isDefaultIdentityFiles(ids) {
		for _, raw := range ids {
			f := "none"
			if !strings.EqualFold(raw, "none") {
				var err error
				if f, err = tok.expandFile("IdentityFile", raw); err != nil {
					return err
				}
			}
			cfg.ConfigIdentityFiles = append(cfg.ConfigIdentityFiles, f)
		}
	}
	for _, raw := range r["certificatefile"] {
		f, err := tok.expandFile("CertificateFile", raw)
		if err != nil {
			return err
		}
		cfg.ConfigCertificateFiles = append(cfg.ConfigCertificateFiles, f)
	}
	cfg.IdentitiesOnly = cfg.IdentitiesOnly || r.Get("identitiesonly") == "yes"
	// ssh -G prints IdentityAgent and UserKnownHostsFile expanded already.
	if a := r.Get("identityagent"); a != "" && cfg.IdentityAgent == "" {
		cfg.IdentityAgent = a
	}
	// A known_hosts file given to hoist replaces the configuration's. ssh
	// expands a leading ~ in these once more, and in GlobalKnownHostsFile
	// only that.
	if files := strings.Fields(r.Get("userknownhostsfile")); len(files) > 0 && cfg.KnownHostsFile == "" {
		for i := range files {
			var err error
			if files[i], err = tildeExpand(files[i]); err != nil {
				return configError("UserKnownHostsFile", files[i], err)
			}
		}
		cfg.KnownHostsFile = files[0]
		cfg.KnownHostsFiles = append(cfg.KnownHostsFiles, files[1:]...)
	}
	if files := strings.Fields(r.Get("globalknownhostsfile")); len(files) > 0 && cfg.GlobalKnownHostsFiles == nil {
		for _, raw := range files {
			f, err := tildeExpand(raw)
			if err != nil {
				return configError("GlobalKnownHostsFile", raw, err)
			}
			cfg.GlobalKnownHostsFiles = append(cfg.GlobalKnownHostsFiles, f)
		}
	}
	// The alias is used as ssh uses it, whatever it looks like ("none"
	// and "[web]:2222" included): ssh -G prints it only when it is set.
	if a := r.Get("hostkeyalias"); a != "" {
		cfg.HostKeyAlias = a
	}
	cfg.HashKnownHosts = r.Get("hashknownhosts") == "yes"
	switch r.Get("stricthostkeychecking") {
	case "accept-new":
		cfg.AcceptNewHostKey = true
	case "no", "off", "false": // ssh -G prints "no" as false
		cfg.InsecureIgnoreHostKey = true
	}
	if s := r.Get("connecttimeout"); s != "" && s != "none" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			cfg.DialTimeout = time.Duration(n) * time.Second
			cfg.HandshakeTimeout = time.Duration(n) * time.Second
		}
	}
	// ssh -G prints 0, OpenSSH's default, also for a host that sets no
	// interval; hoist's default is to keep alive. A 0 the command line
	// gives turns keepalives off.
	if n, err := strconv.Atoi(r.Get("serveraliveinterval")); err == nil && n > 0 {
		cfg.KeepaliveInterval = time.Duration(n) * time.Second
	} else if _, given := opts.option("serveraliveinterval"); given && err == nil && n == 0 {
		cfg.KeepaliveInterval = -1
	}
	if n, err := strconv.Atoi(r.Get("serveralivecountmax")); err == nil && n > 0 {
		cfg.KeepaliveMaxMissed = n
	}
	cfg.Control = controlFrom(r)
	if cfg.Dialer != nil {
		return nil
	}
	if pc := r.Get("proxycommand"); pc != "" && pc != "none" {
		pc, err := tok.expand(pc, proxyTokens, false)
		if err != nil {
			return configError("ProxyCommand", r.Get("proxycommand"), err)
		}
		cfg.Dialer, cfg.Via = proxyCommandDialer(pc), "ProxyCommand "+pc
		return nil
	}
	if pj := r.Get("proxyjump"); pj != "" && pj != "none" {
		hops, err := parseJump(pj, tok)
		if err != nil {
			return err
		}
		d, err := proxyJumpDialer(hops, base, opts, original)
		if err != nil {
			return err
		}
		cfg.Dialer, cfg.Via = d, "ProxyJump "+renderJump(hops)
	}
	return nil
}

var (
	defaultIDsOnce sync.Once
	defaultIDs     []string
)

// isDefaultIdentityFiles reports whether files, the IdentityFile lines of
// ssh -G, are the defaults ssh lists when the configuration names none
// (they differ between OpenSSH releases: the installed ssh says which they
// are, asked once with no configuration at all).
func isDefaultIdentityFiles(files []string) bool {
	if len(files) == 0 {
		return true
	}
	for _, f := range files {
		if !strings.HasPrefix(f, "~/.ssh/id_") {
			return false
		}
	}
	defaultIDsOnce.Do(func() {
		out, err := exec.Command("ssh", "-G", "-F", "none", "--", "defaults.invalid").Output()
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f, ok := strings.CutPrefix(line, "identityfile "); ok {
				defaultIDs = append(defaultIDs, f)
			}
		}
	})
	return slices.Equal(files, defaultIDs)
}
