package transport

import (
	"errors"
)

// wireError carries a master's dial error to the command that started it,
// so that the command returns the same error DialSSH would have returned
// to it: the same type, kind and message.
type wireError struct {
	Kind    string        `json:"kind,omitempty"` // a *DialError's Kind
	Msg     string        `json:"msg"`
	Cause   string        `json:"cause,omitempty"`
	HostKey *HostKeyError `json:"host_key,omitempty"`
	Jump    string        `json:"jump,omitempty"` // a *JumpError's Host; Inner its Err
	Inner   *wireError    `json:"inner,omitempty"`
}

var dialKinds = map[string]error{
	"unreachable":       ErrUnreachable,
	"handshake-timeout": ErrHandshakeTimeout,
	"handshake":         ErrHandshake,
	"auth":              ErrAuth,
	"host-key":          ErrHostKey,
	"identity":          ErrIdentity,
	"known-hosts":       ErrKnownHosts,
}

func encodeError(err error) *wireError {
	w := &wireError{Msg: err.Error()}
	var de *DialError
	var he *HostKeyError
	var je *JumpError
	switch {
	case errors.As(err, &je):
		w.Jump, w.Inner = je.Host, encodeError(je.Err)
	case errors.As(err, &he):
		c := *he
		if c.Err != nil {
			w.Cause = c.Err.Error()
		}
		c.Err = nil
		w.HostKey = &c
	case errors.As(err, &de):
		for name, k := range dialKinds {
			if de.Kind == k {
				w.Kind = name
			}
		}
		if de.Err != nil {
			w.Cause = de.Err.Error()
		}
	}
	return w
}

func (w *wireError) decode() error {
	var cause error
	if w.Cause != "" {
		cause = errors.New(w.Cause)
	}
	switch {
	case w.Inner != nil:
		return &JumpError{Host: w.Jump, Err: w.Inner.decode()}
	case w.HostKey != nil:
		he := *w.HostKey
		he.Err = cause
		return &he
	case dialKinds[w.Kind] != nil:
		return &DialError{Kind: dialKinds[w.Kind], Msg: w.Msg, Err: cause}
	}
	return errors.New(w.Msg)
}
