package remote

import (
	"io"
	"strconv"
	"strings"
	"sync"
)

// Loader is the command line of every host command. The fragment follows on
// standard input, after a line with its length, so that nothing but this
// fixed line shows in the host's process list and a fragment has no size
// limit. Whatever the login shell, it parses only one single-quoted word
// without \ ' ! or a newline in it, and replaces itself with /bin/sh. head -c
// (GNU, busybox, BSD) reads the fragment; dd where it is missing. Each is a
// command substitution of its own, so that the shell's child runs the
// program itself (one process, not a subshell that starts it).
const Loader = `exec /bin/sh -c 'IFS= read -r h_n && { h_load=$(head -c "$h_n" 2>/dev/null) || h_load=$(dd bs=1 count="$h_n" 2>/dev/null); } && eval "$h_load"'`

// feed is a command's standard input: the fragment's length and the
// fragment, then, once the host has said LOADED, the caller's control
// channel (or nothing, kept open, until the command ends). Holding the
// control lines back until LOADED means that a reader that takes more than
// it was asked for (head -c may) can never swallow one.
type feed struct {
	head     *strings.Reader
	rest     io.Reader
	isLoaded chan struct{}
	done     chan struct{}
	once     sync.Once
	end      sync.Once
}

// LoaderInput is what the Loader reads from standard input to run script:
// its length on a line, then the script. A caller that runs a script of its
// own through a transport (tests do) sends this after Loader.
func LoaderInput(script string) *strings.Reader {
	return strings.NewReader(strconv.Itoa(len(script)) + "\n" + script)
}

func newFeed(script string, rest io.Reader) *feed {
	return &feed{
		head:     LoaderInput(script),
		rest:     rest,
		isLoaded: make(chan struct{}),
		done:     make(chan struct{}),
	}
}

func (f *feed) loaded() { f.once.Do(func() { close(f.isLoaded) }) }
func (f *feed) finish() { f.end.Do(func() { close(f.done) }) }

func (f *feed) Read(p []byte) (int, error) {
	if f.head.Len() > 0 {
		return f.head.Read(p)
	}
	select {
	case <-f.isLoaded:
	case <-f.done:
		return 0, io.EOF
	}
	if f.rest == nil {
		<-f.done
		return 0, io.EOF
	}
	return f.rest.Read(p)
}
