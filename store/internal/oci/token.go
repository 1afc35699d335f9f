package oci

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// Token is what a host needs to pull one repository: the value of an
// Authorization header, or nothing.
type Token struct {
	// Scheme is "" when the registry lets anyone pull, "Bearer" for a
	// token, or "Basic" for a registry that issues no tokens (the value
	// is then the user's own credentials, which do not expire).
	Scheme string
	// Value follows the scheme in the header.
	Value string
	// Scope is what a token the registry issued grants
	// ("repository:REPO:pull"); "" for a token given as it is.
	Scope string
	// Expires is when a token the registry issued stops being accepted,
	// measured from just before it was asked for; zero when unknown (a
	// token given as it is) or never (Basic).
	Expires time.Time
}

// defaultTokenLife is a token's lifetime when the token server does not
// say (the token specification's default).
const defaultTokenLife = 60 * time.Second

// PullToken asks ref's registry how it authenticates (GET /v2/ without
// credentials) and gets what a host needs to pull ref's repository and
// nothing more: with bearer tokens, one scoped "repository:REPO:pull",
// fetched from the realm with the user's credentials (or a refresh
// token), with its lifetime (expires_in, which oras-go drops). A token
// from --registry-token-file, or a registry token in docker's
// configuration, is handed as it is: hoist cannot narrow it.
func (c *Client) PullToken(ctx context.Context, ref registry.Reference) (Token, error) {
	host := ref.Registry
	base := &url.URL{Scheme: "https", Host: host, Path: "/v2/"}
	if c.PlainHTTP(host) {
		base.Scheme = "http"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return Token{}, err
	}
	resp, err := c.noRedirects().Do(req)
	if err != nil {
		return Token{}, c.Describe(host, err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return Token{}, nil
	case http.StatusUnauthorized:
	default:
		return Token{}, fmt.Errorf("%s: GET /v2/ answered %s; is it an OCI registry?", host, resp.Status)
	}
	scheme, params := parseChallenge(resp.Header.Get("WWW-Authenticate"))
	cred, err := c.cred(ctx, host)
	if err != nil {
		return Token{}, fmt.Errorf("%s: reading credentials: %w", host, err)
	}
	switch scheme {
	case "basic":
		if cred.Username == "" || cred.Password == "" {
			return Token{}, fmt.Errorf("%s: it asks for a user and password, and none are known for it; docker login %s", host, host)
		}
		return Token{Scheme: "Basic", Value: base64.StdEncoding.EncodeToString([]byte(cred.Username + ":" + cred.Password))}, nil
	case "bearer":
	default:
		return Token{}, fmt.Errorf("%s: it asks for %q authentication, which hoist does not speak", host, resp.Header.Get("WWW-Authenticate"))
	}
	if cred.AccessToken != "" {
		return Token{Scheme: "Bearer", Value: cred.AccessToken}, nil
	}
	realm, err := checkRealm(params["realm"], base)
	if err != nil {
		return Token{}, fmt.Errorf("%s: %w", host, err)
	}
	scope := auth.ScopeRepository(ref.Repository, auth.ActionPull)
	start := time.Now()
	tok, life, err := c.fetchToken(ctx, realm, params["service"], scope, cred)
	if err != nil {
		return Token{}, fmt.Errorf("%s: getting a pull token from %s: %w", host, realm.Host, err)
	}
	return Token{Scheme: "Bearer", Value: tok, Scope: scope, Expires: start.Add(life)}, nil
}

// fetchToken asks the realm for a token for scope: an OAuth2 refresh
// grant with a refresh token (docker's identitytoken), else a GET with the
// user's basic credentials, or none (an anonymous token).
func (c *Client) fetchToken(ctx context.Context, realm *url.URL, service, scope string, cred auth.Credential) (string, time.Duration, error) {
	var req *http.Request
	var err error
	if cred.RefreshToken != "" {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cred.RefreshToken},
			"service": {service}, "scope": {scope}, "client_id": {"hoist"}}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		u := *realm
		q := u.Query()
		if service != "" {
			q.Set("service", service)
		}
		q.Set("scope", scope)
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err == nil && (cred.Username != "" || cred.Password != "") {
			req.SetBasicAuth(cred.Username, cred.Password)
		}
	}
	if err != nil {
		return "", 0, err
	}
	resp, err := c.noRedirects().Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("the token server answered %s", resp.Status)
	}
	var body struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 128<<10)).Decode(&body); err != nil {
		return "", 0, fmt.Errorf("the token server's answer: %w", err)
	}
	tok := body.AccessToken
	if tok == "" {
		tok = body.Token
	}
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", 0, errors.New("the token server gave no usable token")
	}
	life := defaultTokenLife
	if body.ExpiresIn > 0 {
		life = time.Duration(body.ExpiresIn) * time.Second
	}
	return tok, life, nil
}

// noRedirects is the plain client, following no redirect: a token request
// carries the user's credentials, and goes only where the registry said.
func (c *Client) noRedirects() *http.Client {
	cl := *c.plain
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cl
}

// checkRealm refuses a realm the user's credentials should not go to:
// plain HTTP from a registry reached over HTTPS, or an address on this
// machine, its link or a cloud's metadata service other than the
// registry's own host (a registry that names one is after what the
// workstation can reach). Names are not resolved.
func checkRealm(realm string, registryURL *url.URL) (*url.URL, error) {
	u, err := url.Parse(realm)
	if err != nil || realm == "" || u.Host == "" {
		return nil, fmt.Errorf("its challenge names no usable token realm (%q)", realm)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && registryURL.Scheme == "http":
	default:
		return nil, fmt.Errorf("its token realm %s is not HTTPS", realm)
	}
	if strings.EqualFold(u.Hostname(), registryURL.Hostname()) {
		return u, nil
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsLinkLocalMulticast() {
			return nil, fmt.Errorf("its token realm %s is an address of this machine or its link; hoist sends no credentials there", realm)
		}
	}
	return u, nil
}

// parseChallenge reads a WWW-Authenticate header: its scheme, lowercase,
// and its parameters (token or quoted-string values).
func parseChallenge(h string) (string, map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimLeft(rest, " ,") {
		k, v, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimLeft(v, " ")
		if strings.HasPrefix(v, `"`) {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				break
			}
			params[k], _ = strconv.Unquote(q)
			rest = v[len(q):]
			continue
		}
		end := strings.IndexByte(v, ',')
		if end < 0 {
			end = len(v)
		}
		params[k], rest = strings.TrimSpace(v[:end]), v[end:]
	}
	return strings.ToLower(scheme), params
}
