package transport

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// defaultIdentityNames are tried, in this order, when no -i is given.
var defaultIdentityNames = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// identities are the keys DialSSH offers, and what to say about them should
// the host refuse them all.
type identities struct {
	signers []ssh.Signer
	tried   []string // files and "ssh-agent", as listed in the ErrAuth message
	locked  []string // passphrase-protected files the agent does not hold
	notes   []string // default files skipped for other reasons
	agent   net.Conn // open until the handshake is over: agent keys sign through it
}

// setDeadline bounds the agent's signing by the handshake deadline, which
// the TCP connection's deadline alone would not.
func (ids *identities) setDeadline(t time.Time) {
	if ids.agent != nil {
		_ = ids.agent.SetDeadline(t)
	}
}

func (ids *identities) close() {
	if ids.agent != nil {
		ids.agent.Close()
	}
}

// loadIdentities reads the identity files and asks the agent for its keys.
// Only an unusable file named in cfg.IdentityFiles is an error.
func loadIdentities(cfg SSHConfig) (*identities, error) {
	ids := &identities{}
	var agentKeys []ssh.Signer
	agentLabel := ""
	if sock := os.Getenv("SSH_AUTH_SOCK"); !cfg.NoAgent && sock != "" {
		agentKeys, agentLabel = ids.askAgent(sock)
	}

	files, explicit := cfg.IdentityFiles, true
	if len(files) == 0 {
		explicit = false
		if home, err := os.UserHomeDir(); err == nil {
			for _, name := range defaultIdentityNames {
				files = append(files, filepath.Join(home, ".ssh", name))
			}
		}
	}
	for _, file := range files {
		signer, err := readIdentity(file, agentKeys)
		switch {
		case err == nil && signer == nil: // locked, but the agent holds it
		case err == nil:
			ids.signers = append(ids.signers, signer)
			ids.tried = append(ids.tried, file)
		case errors.Is(err, errLocked):
			ids.locked = append(ids.locked, file)
		case explicit:
			ids.close()
			return nil, dialErr(ErrIdentity, errors.Unwrap(err), "identity file %s: %v; check -i", file, err)
		case errors.Is(err, fs.ErrNotExist):
			// Absent default keys are the normal case.
		default:
			ids.notes = append(ids.notes, file+" ("+err.Error()+")")
		}
	}

	// Agent keys go after the files so that a key chosen with -i is offered
	// before sshd's MaxAuthTries runs out on unrelated agent keys.
	for _, k := range agentKeys {
		if !containsKey(ids.signers, k.PublicKey()) {
			ids.signers = append(ids.signers, k)
		}
	}
	if agentLabel != "" {
		ids.tried = append(ids.tried, agentLabel)
	}
	return ids, nil
}

// askAgent returns the agent's keys and how to list the agent among the
// things tried.
func (ids *identities) askAgent(sock string) ([]ssh.Signer, string) {
	conn, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, "ssh-agent (unreachable)"
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second)) // a wedged agent must not hang DialSSH
	keys, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, "ssh-agent (unreachable)"
	}
	ids.agent = conn
	if len(keys) == 0 {
		return nil, "ssh-agent (no keys)"
	}
	return keys, "ssh-agent"
}

// errLocked marks a passphrase-protected key the agent cannot stand in for.
var errLocked = errors.New("passphrase-protected")

// badIdentity says, in a few lowercase words, why a key file is unusable.
type badIdentity struct {
	why string
	err error
}

func (b *badIdentity) Error() string { return b.why }
func (b *badIdentity) Unwrap() error { return b.err }

// readIdentity parses one private key file. It returns (nil, nil) for a
// passphrase-protected key the agent already holds, and errLocked for one
// it does not.
func readIdentity(file string, agentKeys []ssh.Signer) (ssh.Signer, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		var why string
		switch {
		case errors.Is(err, fs.ErrNotExist):
			why = "no such file"
		case errors.Is(err, fs.ErrPermission):
			why = "permission denied"
		default:
			why = causeText(err)
		}
		return nil, &badIdentity{why, err}
	}
	signer, err := ssh.ParsePrivateKey(pem)
	var locked *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return signer, nil
	case errors.As(err, &locked):
		pub := locked.PublicKey
		if pub == nil {
			pub = readPublicKey(file + ".pub")
		}
		if pub != nil && containsKey(agentKeys, pub) || pub == nil && len(agentKeys) > 0 {
			return nil, nil
		}
		return nil, errLocked
	default:
		why := "not a usable private key (" + causeText(err) + ")"
		return nil, &badIdentity{why, err}
	}
}

func readPublicKey(file string) ssh.PublicKey {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil
	}
	return pub
}

func containsKey(signers []ssh.Signer, pub ssh.PublicKey) bool {
	for _, s := range signers {
		if bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
			return true
		}
	}
	return false
}

// authError builds the ErrAuth message: what was offered, what was left
// out, and what to do.
func (ids *identities) authError(user string, cause error) error {
	tried := "no keys: no identity files and no ssh-agent"
	if len(ids.tried) > 0 {
		tried = strings.Join(ids.tried, ", ")
	}
	var msg strings.Builder
	msg.WriteString("authentication failed for user " + user + " (tried: " + tried + ")")
	for _, n := range ids.notes {
		msg.WriteString(", skipped " + n)
	}
	todo := "check the user name and -i FILE, or add the key to the host's authorized_keys"
	if len(ids.locked) > 0 {
		verb := " is"
		if len(ids.locked) > 1 {
			verb = " are"
		}
		msg.WriteString(" and " + strings.Join(ids.locked, ", ") + verb + " passphrase-protected")
		todo = "add it to ssh-agent (ssh-add), or " + todo
	}
	return dialErr(ErrAuth, cause, "%s; %s", msg.String(), todo)
}

func (ids *identities) authMethods() []ssh.AuthMethod {
	if len(ids.signers) == 0 {
		return nil
	}
	return []ssh.AuthMethod{ssh.PublicKeys(ids.signers...)}
}
