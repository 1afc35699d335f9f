package main

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/term"
)

// passphrases asks for the passphrase of an encrypted identity file on the
// terminal (/dev/tty), once per file for the whole run, one question at a
// time however many hosts connect at once. Without a terminal it is nil:
// such a key is skipped and named in the authentication error.
type passphrases struct {
	mu    sync.Mutex
	given map[string][]byte
}

func (a *app) passphrase() func(file string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	tty.Close()
	a.mu.Lock()
	if a.keys == nil {
		a.keys = &passphrases{given: map[string][]byte{}}
	}
	p := a.keys
	a.mu.Unlock()
	return p.ask
}

func (p *passphrases) ask(file string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pw, ok := p.given[file]; ok {
		return pw, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer tty.Close()
	fmt.Fprintf(tty, "Enter passphrase for key '%s': ", printable(file))
	pw, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, err
	}
	p.given[file] = pw
	return pw, nil
}
