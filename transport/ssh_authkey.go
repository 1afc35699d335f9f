package transport

import (
	"io"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// accepted notes which key the host accepted: x/crypto/ssh asks the host
// whether it would take a key before signing with it, so the last key that
// signed during a successful authentication is the one that worked.
type accepted struct {
	mu    sync.Mutex
	label string
}

func (a *accepted) set(label string) {
	a.mu.Lock()
	a.label = label
	a.mu.Unlock()
}

func (a *accepted) get() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.label
}

// noting wraps s so that signing notes label in a, keeping the signature
// algorithms s offers: a wrapper that hid them would make RSA keys sign
// with SHA-1 only, which current servers refuse.
func noting(s ssh.Signer, label string, a *accepted) ssh.Signer {
	if strings.HasPrefix(label, "ssh-agent") {
		label = "ssh-agent key " + ssh.FingerprintSHA256(s.PublicKey())
	}
	n := notingSigner{Signer: s, note: func() { a.set(label) }}
	switch s := s.(type) {
	case ssh.MultiAlgorithmSigner:
		return notingMulti{notingAlgo{n, s}, s}
	case ssh.AlgorithmSigner:
		return notingAlgo{n, s}
	}
	return n
}

type notingSigner struct {
	ssh.Signer
	note func()
}

func (n notingSigner) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	n.note()
	return n.Signer.Sign(rand, data)
}

type notingAlgo struct {
	notingSigner
	as ssh.AlgorithmSigner
}

func (n notingAlgo) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*ssh.Signature, error) {
	n.note()
	return n.as.SignWithAlgorithm(rand, data, algorithm)
}

type notingMulti struct {
	notingAlgo
	ms ssh.MultiAlgorithmSigner
}

func (n notingMulti) Algorithms() []string { return n.ms.Algorithms() }
