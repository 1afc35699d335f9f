package registry

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BlobStore serves the registry's blobs at another address, without
// credentials, as the object storage a registry redirects its blob
// downloads to (Proxy.RedirectTo): GET /blobs/sha256:HEX, Range requests
// included, from the registry's storage. It records each request's
// Authorization header: a client that sends the registry's credential to
// it leaks the credential to another host.
type BlobStore struct {
	URL string // "https://127.0.0.1:PORT" (a certificate from the registry's CA), or http:// with PlainHTTP

	srv      *httptest.Server
	mu       sync.Mutex
	requests []BlobStoreRequest
}

// BlobStoreRequest is one request a BlobStore answered.
type BlobStoreRequest struct {
	Path          string
	Authorization string
}

// NewBlobStore starts a blob store for r for the test.
func (r *Registry) NewBlobStore(t testing.TB) *BlobStore {
	t.Helper()
	s := &BlobStore{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, BlobStoreRequest{Path: req.URL.Path, Authorization: req.Header.Get("Authorization")})
		s.mu.Unlock()
		name := path.Base(req.URL.Path)
		if req.Method != http.MethodGet || !strings.HasPrefix(req.URL.Path, "/blobs/sha256:") || len(name) != len("sha256:")+64 {
			http.NotFound(w, req)
			return
		}
		f, err := os.Open(r.BlobPath(name))
		if err != nil {
			http.NotFound(w, req)
			return
		}
		defer f.Close()
		http.ServeContent(w, req, "", time.Time{}, f)
	}))
	if r.opts.PlainHTTP {
		s.srv.Start()
	} else {
		cert, err := r.ca.issue(r.Dir, fmt.Sprintf("blobstore-%s", randomHex(4)))
		if err != nil {
			t.Fatalf("registry blob store: %v", err)
		}
		s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.srv.StartTLS()
	}
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Requests lists the requests answered so far.
func (s *BlobStore) Requests() []BlobStoreRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}
