package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Proxy is a mirror in front of a Registry that damages blob downloads on
// demand: it serves the registry's API at its own address (TLS with a
// certificate from the registry's CA, so clients that trust CAFile trust
// it; plain HTTP with PlainHTTP), relays every request, and applies the
// faults set with Cut, Stall, Corrupt, Grow and RedirectTo to blob GETs
// (GET /v2/NAME/blobs/sha256:HEX), Range requests included. Everything
// else passes unchanged, credentials too.
//
// For faults below HTTP (a refused or silently dead connection) put the
// sshd package's TCP Proxy in front of Registry.Addr instead.
type Proxy struct {
	Addr string // "127.0.0.1:PORT"
	URL  string // "https://127.0.0.1:PORT", or http:// with PlainHTTP

	srv *httptest.Server

	mu       sync.Mutex
	cuts     []int64 // offsets at which the next blob downloads end, in order
	stall    int64   // with stalled: the offset at which every blob download stops
	stalled  bool
	release  chan struct{} // closed by Clear or the end of the test: stalled downloads are cut
	corrupt  bool
	grow     int64      // bytes added to every blob download, sent chunked
	redirect *BlobStore // where blob downloads are redirected to
	agent    string     // with OnlyFor: the User-Agent prefix of the clients faults apply to
	requests []ProxyRequest
}

// ProxyRequest is one request the proxy relayed.
type ProxyRequest struct {
	Method string
	URI    string
	Range  string // the request's Range header
	Status int
	Bytes  int64  // body bytes the proxy delivered to the client
	Fault  string // "", "cut", "stall", "corrupt", "grow" or "redirect"
}

// blobPath matches the path of a blob, which faults apply to.
var blobPath = regexp.MustCompile(`^/v2/.+/blobs/sha256:[0-9a-f]{64}$`)

var errFault = errors.New("registry proxy: injected fault")

// NewProxy starts a proxy in front of r for the test.
func (r *Registry) NewProxy(t testing.TB) *Proxy {
	t.Helper()
	target, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{release: make(chan struct{})}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// Location headers then name the proxy, as a mirror's do.
			pr.Out.Host = pr.In.Host
		},
		Transport:      r.Client().Transport,
		FlushInterval:  -1, // what a fault leaves delivered is exactly what was read
		ModifyResponse: p.modify,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	p.srv = httptest.NewUnstartedServer(rp)
	if r.opts.PlainHTTP {
		p.srv.Start()
	} else {
		cert, err := r.ca.issue(r.Dir, fmt.Sprintf("proxy-%s", randomHex(4)))
		if err != nil {
			t.Fatalf("registry proxy: %v", err)
		}
		p.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		p.srv.StartTLS()
	}
	p.URL = p.srv.URL
	p.Addr = strings.TrimPrefix(strings.TrimPrefix(p.URL, "https://"), "http://")
	t.Cleanup(func() {
		p.Clear()
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

// Cut makes the next n blob downloads longer than `after` body bytes end
// there: the proxy closes the client's connection, as a broken link or a
// restarted middlebox does. A shorter blob's download, which the cut would
// not reach, takes none of them, so exactly n are cut whatever order the
// client fetches in. Later downloads are whole again.
func (p *Proxy) Cut(after int64, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range n {
		p.cuts = append(p.cuts, after)
	}
}

// Stall makes every blob download stop after `after` body bytes and hold
// its connection open, sending nothing, until Clear or the end of the test
// (which then cut it): a silently dead registry.
func (p *Proxy) Stall(after int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stall, p.stalled = after, true
}

// Corrupt makes every blob download carry a wrong byte: the first byte of
// each body is inverted, lengths and headers unchanged, as a tampering
// mirror would serve it.
func (p *Proxy) Corrupt() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.corrupt = true
}

// Grow makes every blob download longer than the blob by extra bytes:
// the blob's own bytes, then extra more, in a chunked answer that declares
// no length (as a crafted registry, or a mirror, could send without end).
// What a client that closes early left unread is not counted in Bytes.
func (p *Proxy) Grow(extra int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.grow = extra
}

// RedirectTo makes every blob download that the registry would serve
// (its credentials checked there) answer 307 Temporary Redirect to the
// blob at s, as a registry that keeps its blobs in object storage does.
func (p *Proxy) RedirectTo(s *BlobStore) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.redirect = s
}

// OnlyFor makes the faults apply only to clients whose User-Agent begins
// with agent ("curl/", say): a workstation's Go client reads the registry
// unharmed, the hosts behind the same mirror meet the faults.
func (p *Proxy) OnlyFor(agent string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agent = agent
}

// Clear removes every fault; stalled downloads are cut.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cuts, p.stalled, p.corrupt, p.grow, p.redirect = nil, false, false, 0, nil
	select {
	case <-p.release:
	default:
		close(p.release)
	}
	p.release = make(chan struct{})
}

// Requests lists the requests relayed so far, in the order they began.
// A download still under way shows the bytes delivered so far.
func (p *Proxy) Requests() []ProxyRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// BlobBytes is the number of blob body bytes delivered to clients so far.
func (p *Proxy) BlobBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, r := range p.requests {
		if r.Method == http.MethodGet && blobPath.MatchString(strings.SplitN(r.URI, "?", 2)[0]) {
			n += r.Bytes
		}
	}
	return n
}

// modify records the response and puts the fault in effect, if any, on
// its body.
func (p *Proxy) modify(resp *http.Response) error {
	req := resp.Request
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, ProxyRequest{
		Method: req.Method, URI: req.URL.RequestURI(), Range: req.Header.Get("Range"), Status: resp.StatusCode,
	})
	b := &faultyBody{ReadCloser: resp.Body, p: p, index: len(p.requests) - 1, limit: -1, ctx: req.Context()}
	if req.Method == http.MethodGet && blobPath.MatchString(req.URL.Path) && resp.StatusCode/100 == 2 && strings.HasPrefix(req.UserAgent(), p.agent) {
		switch {
		case len(p.cuts) > 0 && (resp.ContentLength < 0 || resp.ContentLength > p.cuts[0]):
			b.fault, b.limit = "cut", p.cuts[0]
			p.cuts = p.cuts[1:]
		case p.stalled:
			b.fault, b.limit, b.release = "stall", p.stall, p.release
		case p.corrupt:
			b.fault = "corrupt"
		case p.grow > 0:
			b.fault, b.extra = "grow", p.grow
			resp.ContentLength = -1
			resp.Header.Del("Content-Length")
		case p.redirect != nil:
			b.fault = "redirect"
			resp.Body.Close()
			resp.StatusCode, resp.Status = http.StatusTemporaryRedirect, "307 Temporary Redirect"
			resp.Header = http.Header{"Location": {p.redirect.URL + "/blobs/" + path.Base(req.URL.Path)}, "Content-Length": {"0"}}
			resp.ContentLength = 0
			b.ReadCloser = io.NopCloser(strings.NewReader(""))
		}
	}
	p.requests[b.index].Fault = b.fault
	resp.Body = b
	return nil
}

// faultyBody relays a response body, counting it, up to limit bytes
// (unless negative), then fails, after waiting for release when stalled.
type faultyBody struct {
	io.ReadCloser
	p       *Proxy
	index   int // in p.requests
	fault   string
	extra   int64 // bytes to send after the body's own
	limit   int64
	sent    int64
	release chan struct{}
	ctx     context.Context
}

func (b *faultyBody) Read(buf []byte) (int, error) {
	if b.limit >= 0 {
		left := b.limit - b.sent
		if left <= 0 {
			if b.release != nil {
				select {
				case <-b.release:
				case <-b.ctx.Done():
				}
			}
			return 0, errFault
		}
		if int64(len(buf)) > left {
			buf = buf[:left]
		}
	}
	n, err := b.ReadCloser.Read(buf)
	if err == io.EOF && b.extra > 0 {
		if n == 0 {
			n = int(min(int64(len(buf)), b.extra))
			clear(buf[:n])
			b.extra -= int64(n)
		}
		err = nil
	}
	if n > 0 && b.fault == "corrupt" && b.sent == 0 {
		buf[0] ^= 0xff
	}
	b.sent += int64(n)
	b.p.mu.Lock()
	b.p.requests[b.index].Bytes = b.sent
	b.p.mu.Unlock()
	return n, err
}
