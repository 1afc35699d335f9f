package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// dialled are a sequence's probes that this client dials through the
// connection (docs/rollout.md, "Probes"): on each PROBE the host asks, it
// runs them all at once, each by the per-try timeout, and answers one line
// each, "probe SEQ NAME ok|fail MS DETAIL". It keeps every try's results,
// the host's exec probes with them.
type dialled struct {
	d       transport.HostDialer
	probes  []dialProbe
	timeout time.Duration
	mu      sync.Mutex
}

type dialProbe struct {
	name   string
	http   *url.URL // nil for a TCP probe
	addr   string
	badURL error
}

func newDialled(s *Store, c Checks) *dialled {
	dl := &dialled{timeout: DefaultCheckTimeout}
	dl.d, _ = s.Lock().Transport().(transport.HostDialer)
	for i, raw := range c.HTTP {
		p := dialProbe{name: fmt.Sprintf("http%d", i+1)}
		p.http, p.addr, p.badURL = ParseCheckURL(raw)
		dl.probes = append(dl.probes, p)
	}
	for i, a := range c.TCP {
		dl.probes = append(dl.probes, dialProbe{name: fmt.Sprintf("tcp%d", i+1), addr: a})
	}
	return dl
}

// ParseCheckURL checks an http:// URL of a probe: its address (the port
// is 80 when none is given) and the URL.
func ParseCheckURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, "", fmt.Errorf("%q: a check URL is http://HOST:PORT/PATH", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return u, addr, nil
}

// try runs every dialled probe for try seq of ph and returns the answer.
func (dl *dialled) try(ctx context.Context, seq int, ph *Phase) string {
	res := make([]Probe, len(dl.probes))
	var wg sync.WaitGroup
	for i, p := range dl.probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = dl.one(ctx, p)
		}()
	}
	wg.Wait()
	var b strings.Builder
	for _, r := range res {
		dl.add(ph, seq, r)
		v := "ok"
		if !r.OK {
			v = "fail"
		}
		fmt.Fprintf(&b, "probe %d %s %s %d %s\n", seq, r.Name, v, r.Took.Milliseconds(), oneLine(r.Detail))
	}
	return b.String()
}

func (dl *dialled) one(ctx context.Context, p dialProbe) Probe {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, dl.timeout)
	defer cancel()
	detail, err := dl.run(ctx, p)
	r := Probe{Name: p.name, OK: err == nil, Took: time.Since(begin), Detail: detail}
	if err != nil {
		r.Detail = err.Error()
	}
	return r
}

func (dl *dialled) run(ctx context.Context, p dialProbe) (string, error) {
	if p.badURL != nil {
		return "", p.badURL
	}
	if dl.d == nil {
		return "", errors.New("this connection cannot dial probes")
	}
	conn, err := dl.d.DialHost(ctx, p.addr)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w", p.addr, err)
	}
	defer conn.Close()
	if p.http == nil {
		return "connected", nil
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req := &http.Request{Method: http.MethodGet, URL: p.http, Host: p.http.Host, Header: http.Header{
		"User-Agent": {"hoist"}}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Close: true}
	if err := req.Write(conn); err != nil {
		return "", fmt.Errorf("GET %s: %w", p.http, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no status within %s", dl.timeout)
		}
		return "", fmt.Errorf("GET %s: %w", p.http, err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("GET %s: %s", p.http, resp.Status)
	}
	return resp.Status, nil
}

// add puts a probe's result into try seq of ph.
func (dl *dialled) add(ph *Phase, seq int, p Probe) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	t := dl.tryOf(ph, seq)
	t.Probes = append(t.Probes, p)
}

// set records the host's verdict on try seq of ph.
func (dl *dialled) set(ph *Phase, seq int, ok bool, took time.Duration, detail string) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	t := dl.tryOf(ph, seq)
	t.OK, t.Took, t.Detail = ok, took, detail
}

func (dl *dialled) tryOf(ph *Phase, seq int) *Try {
	for i := range ph.Tries {
		if ph.Tries[i].Seq == seq {
			return &ph.Tries[i]
		}
	}
	ph.Tries = append(ph.Tries, Try{Seq: seq})
	return &ph.Tries[len(ph.Tries)-1]
}

// oneLine is text fit for an answer's last field: one line of printable
// characters, at most 200 bytes.
func oneLine(s string) string {
	s = shellcmd.Printable(strings.Join(strings.Fields(s), " "))
	if len(s) > 200 {
		s = s[:200]
	}
	if s == "" {
		s = "-"
	}
	return s
}
