package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// Digest is the OCI digest of data, "sha256:HEX".
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// PushBlob uploads data as a blob of repo (POST, then a monolithic PUT),
// as User, and returns its digest: a way to seed the registry that does
// not go through the code under test.
func (r *Registry) PushBlob(t testing.TB, repo string, data []byte) string {
	t.Helper()
	digest := Digest(data)
	resp := r.do(t, http.MethodPost, r.URL+"/v2/"+repo+"/blobs/uploads/", nil, "repository:"+repo+":pull,push")
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("PushBlob %s: POST uploads: %s", repo, resp.Status)
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("PushBlob %s: POST uploads: %v", repo, err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	resp = r.do(t, http.MethodPut, loc.String(), data, "repository:"+repo+":pull,push")
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PushBlob %s: PUT upload: %s", repo, resp.Status)
	}
	return digest
}

// do sends a request as User: basic auth, or a token for scope from the
// token server.
func (r *Registry) do(t testing.TB, method, u string, body []byte, scope string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		// Without it the registry reads the body as a form.
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	switch r.opts.Auth {
	case Basic:
		req.SetBasicAuth(r.User, r.Password)
	case Token:
		req.Header.Set("Authorization", "Bearer "+r.Token(scope))
	}
	resp, err := r.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, redact(u), err)
	}
	return resp
}

// FetchBlob downloads a blob of repo as User, and fails the test unless
// the registry answers 200.
func (r *Registry) FetchBlob(t testing.TB, repo, digest string) []byte {
	t.Helper()
	resp := r.do(t, http.MethodGet, r.URL+"/v2/"+repo+"/blobs/"+digest, nil, "repository:"+repo+":pull")
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET blob %s of %s: %s %v", digest, repo, resp.Status, err)
	}
	return data
}

// redact drops the query (an upload's _state) from u for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Sprintf("%.40s…", u)
	}
	p.RawQuery = ""
	return p.String()
}
