package registry

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/hoistdev/hoist/e2e/internal/harness"
)

// Auth is how a registry authenticates its clients.
type Auth int

const (
	// Basic is HTTP basic authentication against an htpasswd file (bcrypt)
	// holding User and Password: what `docker login` talks to a small
	// private registry.
	Basic Auth = iota
	// Token is bearer token authentication: the registry answers 401 with
	// `WWW-Authenticate: Bearer realm=TokenURL,service=Service,scope=...`
	// and accepts only tokens from the harness's token server, which hands
	// them to User (basic auth) for the scopes asked for.
	Token
	// Anonymous lets every client pull and push.
	Anonymous
)

func (a Auth) String() string {
	switch a {
	case Basic:
		return "basic"
	case Token:
		return "token"
	case Anonymous:
		return "anonymous"
	}
	return fmt.Sprintf("Auth(%d)", int(a))
}

// Options choose what kind of registry Start runs.
type Options struct {
	Auth Auth
	// PlainHTTP serves plain HTTP instead of TLS; CAFile is then empty.
	// The token server, with Token, still uses TLS.
	PlainHTTP bool
	// TokenTTL is the lifetime of each token the token server issues
	// (its expires_in); 0 means 60 s, the default of the token spec.
	TokenTTL time.Duration
}

// Registry is a running docker-registry on 127.0.0.1. Its exported fields
// are read-only.
type Registry struct {
	Addr     string // "127.0.0.1:PORT": the registry's name in references and in docker's config.json
	URL      string // "https://127.0.0.1:PORT", or http:// with PlainHTTP
	CAFile   string // PEM of the CA that signed the registry's (and the token server's) certificate; "" with PlainHTTP
	User     string // accepted by htpasswd (Basic) or by the token server (Token)
	Password string
	TokenURL string // with Token: the token server's endpoint, the challenge's realm
	Service  string // with Token: the challenge's service, the tokens' audience
	Storage  string // the filesystem driver's root directory
	Dir      string // the registry's directory: config, certificates, log, Storage
	LogPath  string // the registry's output: its log in JSON lines and an access log line per request

	t      testing.TB
	opts   Options
	bin    string
	ca     *authority
	config string
	port   int
	tokens *tokenServer

	mu      sync.Mutex
	running *harness.Process
}

// Start starts a registry for the test and registers its cleanup. It fails
// the test when docker-registry is not installed (`make test` installs it).
func Start(t testing.TB, opts Options) *Registry {
	t.Helper()
	bin, err := harness.FindProgram("docker-registry", "/usr/bin/docker-registry")
	if err != nil {
		t.Fatal("docker-registry not found: run `make test`, which installs it (Debian package docker-registry)")
	}
	sweepOnce.Do(func() { harness.Sweep(dirPrefix, killStale) })
	// Mode 0755: host users read CAFile.
	dir, err := harness.NewDir(dirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	r := &Registry{t: t, opts: opts, bin: bin, Dir: dir, User: "hoist", Password: randomHex(12)}
	t.Cleanup(r.cleanup)
	if err := r.prepare(); err != nil {
		t.Fatalf("preparing registry in %s: %v", dir, err)
	}
	if err := r.launch(); err != nil {
		t.Fatalf("starting docker-registry: %v (log: %s)\n%s", err, r.LogPath, harness.Tail(r.LogPath, 30))
	}
	return r
}

// prepare writes the certificates, the htpasswd file and the config, and
// starts the token server with Token.
func (r *Registry) prepare() error {
	r.Storage = filepath.Join(r.Dir, "storage")
	r.LogPath = filepath.Join(r.Dir, "registry.log")
	r.config = filepath.Join(r.Dir, "config.yml")
	if err := os.Mkdir(r.Storage, 0o700); err != nil {
		return err
	}
	var err error
	if !r.opts.PlainHTTP || r.opts.Auth == Token {
		if r.ca, err = newAuthority(r.Dir); err != nil {
			return err
		}
	}
	if !r.opts.PlainHTTP {
		r.CAFile = r.ca.file
		if _, err := r.ca.issue(r.Dir, "registry"); err != nil {
			return err
		}
	}
	switch r.opts.Auth {
	case Basic:
		hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r.Dir, "htpasswd"), []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
			return err
		}
	case Token:
		if r.tokens, err = startTokenServer(r); err != nil {
			return err
		}
		r.TokenURL, r.Service = r.tokens.url, r.tokens.service
	}
	return nil
}

// configYAML is docker-registry's configuration for port (0: any).
func (r *Registry) configYAML(port int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `version: 0.1
log:
  level: info
  formatter: json
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:%d
  secret: %s
`, r.Storage, port, randomHex(16))
	if !r.opts.PlainHTTP {
		fmt.Fprintf(&b, "  tls:\n    certificate: %s\n    key: %s\n",
			filepath.Join(r.Dir, "registry.pem"), filepath.Join(r.Dir, "registry-key.pem"))
	}
	switch r.opts.Auth {
	case Basic:
		fmt.Fprintf(&b, "auth:\n  htpasswd:\n    realm: hoist-e2e\n    path: %s\n", filepath.Join(r.Dir, "htpasswd"))
	case Token:
		fmt.Fprintf(&b, "auth:\n  token:\n    realm: %s\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n",
			r.tokens.url, r.tokens.service, tokenIssuer, r.tokens.bundle)
	}
	return b.String()
}

// Stop stops the registry; clients then get "connection refused".
// Stopping a stopped registry does nothing.
func (r *Registry) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != nil {
		r.running.Stop(syscall.SIGTERM)
		r.running = nil
	}
}

// Restart starts the registry again, after stopping it if it runs, on the
// same port with the same storage, certificate and credentials. It fails
// the test given to Start.
func (r *Registry) Restart() {
	r.t.Helper()
	r.Stop()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := r.launch()
		if err == nil {
			return
		}
		if !errors.Is(err, errPortInUse) || time.Now().After(deadline) {
			r.t.Fatalf("restarting docker-registry on %s: %v\n%s", r.Addr, err, harness.Tail(r.LogPath, 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BlobPath is where the filesystem driver keeps the blob with digest
// "sha256:HEX". The registry serves that file without checking it again,
// so writing to it makes a registry that serves a wrong blob.
func (r *Registry) BlobPath(digest string) string {
	hexPart := strings.TrimPrefix(digest, "sha256:")
	if len(hexPart) < 2 {
		r.t.Fatalf("BlobPath(%q): want sha256:HEX", digest)
	}
	return filepath.Join(r.Storage, "docker/registry/v2/blobs/sha256", hexPart[:2], hexPart, "data")
}

// Client is an HTTP client that trusts the registry's CA (and only it),
// without credentials.
func (r *Registry) Client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if r.ca != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: r.ca.pool()}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// DockerConfig writes a docker config.json holding the registry's
// credentials, as `docker login` leaves it, and returns its directory: the
// value for DOCKER_CONFIG.
func (r *Registry) DockerConfig() string {
	r.t.Helper()
	dir := filepath.Join(r.Dir, "docker")
	auth := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password))
	data, err := json.Marshal(map[string]any{"auths": map[string]any{r.Addr: map[string]string{"auth": auth}}})
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "config.json"), append(data, '\n'), 0o600)
	}
	if err != nil {
		r.t.Fatalf("writing docker config: %v", err)
	}
	return dir
}

func (r *Registry) cleanup() {
	failed := r.t.Failed()
	if failed {
		r.t.Logf("docker-registry on %s, log %s, last lines:\n%s", r.Addr, r.LogPath, harness.Tail(r.LogPath, 40))
	}
	r.Stop()
	if r.tokens != nil {
		r.tokens.close()
	}
	if failed {
		r.t.Logf("kept %s for inspection; a later test run removes it", r.Dir)
		return
	}
	if err := harness.RemoveAll(r.Dir); err != nil {
		r.t.Errorf("removing registry directory: %v", err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
