// Package oci reaches OCI registries for package store: TLS as the user
// asked for it, credentials read as docker reads them (or a token file),
// and a repository client (oras-go's) over them. It knows nothing of
// runtimes; store lays them out.
//
// Start with [New]; [Client.Repository] gives the repository a reference
// names, [Client.PullToken] a credential to hand to hosts.
package oci

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Options say how to reach registries.
type Options struct {
	// CAFile, when set, is a PEM file of the CAs the registry's certificate
	// must chain to, instead of the system's: curl's --cacert, which is
	// what hosts are given too.
	CAFile string
	// Insecure lists registries (host[:port], as references name them)
	// spoken to over plain HTTP. Every other one is HTTPS, verified.
	Insecure []string
	// TokenFile, when set, holds a bearer token (a registry's access
	// token) used as it is, instead of docker's credentials.
	TokenFile string
	// DockerConfig is the directory of docker's config.json; "" is
	// $DOCKER_CONFIG, else ~/.docker, as docker reads it.
	DockerConfig string
	// UserAgent names the client to registries.
	UserAgent string
}

// Client reaches registries as Options say.
type Client struct {
	opts  Options
	http  *http.Client // TLS as asked, retries on 429 and 5xx
	plain *http.Client // the same without retries, for token requests
	cred  auth.CredentialFunc
	token string // from TokenFile
	cache auth.Cache
}

// New reads the CA file, the token file or docker's configuration, once.
func New(o Options) (*Client, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--registry-ca %s: %w; give the PEM file of the CA that signed the registry's certificate", o.CAFile, errors.Unwrap(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--registry-ca %s: no PEM certificate in it; give the CA certificate that signed the registry's", o.CAFile)
		}
		base.TLSClientConfig.RootCAs = pool
	}
	c := &Client{
		opts:  o,
		http:  &http.Client{Transport: retry.NewTransport(base)},
		plain: &http.Client{Transport: base, Timeout: 30 * time.Second},
		cache: auth.NewCache(),
	}
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("--registry-token-file %s: %w; give the file that holds the registry's token", o.TokenFile, errors.Unwrap(err))
		}
		c.token = strings.TrimSpace(string(b))
		if c.token == "" || strings.ContainsAny(c.token, " \t\r\n") {
			return nil, fmt.Errorf("--registry-token-file %s: want one token on one line", o.TokenFile)
		}
		c.cred = func(context.Context, string) (auth.Credential, error) {
			return auth.Credential{AccessToken: c.token}, nil
		}
		return c, nil
	}
	// docker's rules: $DOCKER_CONFIG/config.json, else
	// ~/.docker/config.json; per registry its credHelpers entry, else
	// credsStore, else the file's auths. No helper is guessed: docker
	// reads only what login wrote.
	var st credentials.Store
	var err error
	if o.DockerConfig != "" {
		st, err = credentials.NewStore(filepath.Join(o.DockerConfig, "config.json"), credentials.StoreOptions{})
	} else {
		st, err = credentials.NewStoreFromDocker(credentials.StoreOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("reading docker's config.json: %w; fix it, or give --registry-token-file", err)
	}
	c.cred = credentials.Credential(st)
	return c, nil
}

// PlainHTTP reports whether host is spoken to over plain HTTP.
func (c *Client) PlainHTTP(host string) bool { return slices.Contains(c.opts.Insecure, host) }

// Repository is the client of ref's repository.
func (c *Client) Repository(ref registry.Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, err
	}
	repo.PlainHTTP = c.PlainHTTP(ref.Registry)
	ua := c.opts.UserAgent
	if ua == "" {
		ua = "hoist"
	}
	repo.Client = &auth.Client{
		Client:     c.http,
		Header:     http.Header{"User-Agent": {ua}},
		Credential: c.cred,
		Cache:      c.cache,
	}
	// 2.8.2 and most registries have no referrers API; hoist sets no
	// subject, so it is never asked.
	repo.SkipReferrersGC = true
	return repo, nil
}

// Describe turns a failure to reach host ("host[:port]" or
// "host[:port]/repository") into hoist's words: what happened, then what
// to do.
func (c *Client) Describe(host string, err error) error {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		if c.opts.CAFile != "" {
			return fmt.Errorf("%s: its certificate is not signed by a CA of --registry-ca %s (%w); give the CA that signed it", host, c.opts.CAFile, err)
		}
		return fmt.Errorf("%s: its certificate is not signed by a CA this system trusts (%w); give its CA with --registry-ca FILE", host, err)
	case errors.As(err, &invalid), errors.As(err, &hostname):
		return fmt.Errorf("%s: its certificate is refused (%w); fix the registry's certificate", host, err)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%s: it speaks plain HTTP (%w); --insecure-registry %s allows that, for this registry only", host, err, registryOf(host))
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("%s: it asks for credentials and none are known for it (%w); docker login %s, or give --registry-token-file", host, err, registryOf(host))
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: it refused the credentials (%w); docker login %s again, or give a valid --registry-token-file", host, err, registryOf(host))
		case http.StatusForbidden:
			return fmt.Errorf("%s: the credentials may not do this (%w); ask for access to the repository", host, err)
		}
	}
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("%s: cannot reach it (%w); check the address, and that the registry is up", host, err)
	}
	return fmt.Errorf("%s: %w", host, err)
}

// registryOf is the registry of "host[:port]/repository".
func registryOf(s string) string {
	r, _, _ := strings.Cut(s, "/")
	return r
}
