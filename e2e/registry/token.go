package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// tokenIssuer is the iss claim of every token, which the registry checks.
const tokenIssuer = "hoist-e2e-token-issuer"

// tokenServer is a token server as docker's token authentication
// specification describes it (distribution's docs/spec/auth/token.md): it
// authenticates User with basic auth (GET) or the OAuth2 password grant
// (POST) and issues a JWT, signed with ES256 and carrying its certificate in
// the x5c header, that grants the scopes asked for. The registry trusts the
// certificate through its rootcertbundle.
type tokenServer struct {
	url, service, bundle string
	user, password       string
	ttl                  time.Duration

	key     *ecdsa.PrivateKey
	certDER []byte
	srv     *httptest.Server

	mu     sync.Mutex
	issued []Issued
}

// Issued is one token the token server handed out.
type Issued struct {
	Scopes []string // granted, "repository:NAME:ACTION,ACTION", in the order asked
	TTL    time.Duration
	Token  string // the token itself, for tests that look for it where it must not be
}

func startTokenServer(r *Registry) (*tokenServer, error) {
	s := &tokenServer{
		service:  "hoist-e2e-registry",
		bundle:   filepath.Join(r.Dir, "token-signer.pem"),
		user:     r.User,
		password: r.Password,
		ttl:      r.opts.TokenTTL,
	}
	if s.ttl == 0 {
		s.ttl = 60 * time.Second
	}
	var err error
	if s.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "hoist e2e token signer"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if s.certDER, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, s.key.Public(), s.key); err != nil {
		return nil, err
	}
	if err := writePEM(s.bundle, "CERTIFICATE", s.certDER, 0o644); err != nil {
		return nil, err
	}
	cert, err := r.ca.issue(r.Dir, "token-server")
	if err != nil {
		return nil, err
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	s.url = s.srv.URL + "/token"
	return s, nil
}

func (s *tokenServer) close() { s.srv.Close() }

func (s *tokenServer) serve(w http.ResponseWriter, req *http.Request) {
	var user, password, service string
	var scopes []string
	switch req.Method {
	case http.MethodGet:
		var ok bool
		if user, password, ok = req.BasicAuth(); !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="hoist-e2e-token"`)
			http.Error(w, "credentials required", http.StatusUnauthorized)
			return
		}
		service, scopes = req.URL.Query().Get("service"), req.URL.Query()["scope"]
	case http.MethodPost:
		if req.ParseForm() != nil || req.PostForm.Get("grant_type") != "password" {
			http.Error(w, "want grant_type=password", http.StatusBadRequest)
			return
		}
		user, password = req.PostForm.Get("username"), req.PostForm.Get("password")
		service, scopes = req.PostForm.Get("service"), req.PostForm["scope"]
	default:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if subtle.ConstantTimeCompare([]byte(user+"\x00"+password), []byte(s.user+"\x00"+s.password)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="hoist-e2e-token"`)
		http.Error(w, "wrong credentials", http.StatusUnauthorized)
		return
	}
	if service != s.service {
		http.Error(w, "unknown service "+service, http.StatusBadRequest)
		return
	}
	token, granted, err := s.sign(user, scopes)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.issued = append(s.issued, Issued{Scopes: granted, TTL: s.ttl, Token: token})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"token":        token,
		"access_token": token,
		"expires_in":   int(s.ttl / time.Second),
		"issued_at":    time.Now().UTC().Format(time.RFC3339),
	})
}

type resourceActions struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// sign makes the JWT granting scopes (each "TYPE:NAME:ACTIONS", several
// per parameter separated by spaces).
func (s *tokenServer) sign(user string, scopes []string) (string, []string, error) {
	var access []resourceActions
	var granted []string
	for _, param := range scopes {
		for _, scope := range strings.Fields(param) {
			i, j := strings.Index(scope, ":"), strings.LastIndex(scope, ":")
			if i < 0 || i == j {
				continue
			}
			var actions []string
			for _, a := range strings.Split(scope[j+1:], ",") {
				if a != "" && !slices.Contains(actions, a) {
					actions = append(actions, a)
				}
			}
			access = append(access, resourceActions{Type: scope[:i], Name: scope[i+1 : j], Actions: actions})
			granted = append(granted, scope[:j+1]+strings.Join(actions, ","))
		}
	}
	now := time.Now()
	header, err := json.Marshal(map[string]any{
		"typ": "JWT",
		"alg": "ES256",
		"x5c": []string{base64.StdEncoding.EncodeToString(s.certDER)},
	})
	if err != nil {
		return "", nil, err
	}
	claims, err := json.Marshal(map[string]any{
		"iss":    tokenIssuer,
		"sub":    user,
		"aud":    s.service,
		"exp":    now.Add(s.ttl).Unix(),
		"nbf":    now.Unix(),
		"iat":    now.Unix(),
		"jti":    randomHex(8),
		"access": access,
	})
	if err != nil {
		return "", nil, err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signed))
	rInt, sInt, err := ecdsa.Sign(rand.Reader, s.key, digest[:])
	if err != nil {
		return "", nil, err
	}
	sig := make([]byte, 64)
	rInt.FillBytes(sig[:32])
	sInt.FillBytes(sig[32:])
	return signed + "." + enc.EncodeToString(sig), granted, nil
}

// Token fetches a token for scopes ("repository:NAME:pull", ...) from the
// token server, as a client does after a 401: the way to get what a host is
// handed. With other kinds of Auth it fails the test.
func (r *Registry) Token(scopes ...string) string {
	r.t.Helper()
	if r.tokens == nil {
		r.t.Fatalf("Registry.Token: the registry runs with %v auth, not Token", r.opts.Auth)
	}
	q := url.Values{"service": {r.Service}, "scope": scopes}
	req, err := http.NewRequest(http.MethodGet, r.TokenURL+"?"+q.Encode(), nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.SetBasicAuth(r.User, r.Password)
	resp, err := r.Client().Do(req)
	if err != nil {
		r.t.Fatalf("fetching a token: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil || body.Token == "" {
		r.t.Fatalf("fetching a token: %s", resp.Status)
	}
	return body.Token
}

// Issued lists the tokens the token server has issued so far.
func (r *Registry) Issued() []Issued {
	if r.tokens == nil {
		return nil
	}
	r.tokens.mu.Lock()
	defer r.tokens.mu.Unlock()
	return slices.Clone(r.tokens.issued)
}
