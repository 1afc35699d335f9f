package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/store"
)

// TestPublishTokenAuth publishes to a registry that takes only bearer
// tokens (docker's config.json holds the user's password, which goes to the
// token server), reads the runtime back, and gets a credential for hosts:
// a token scoped to pulling that one repository, with the lifetime the
// token server gave, which pulls a blob and can neither push nor read
// another repository. A token given in --registry-token-file is used as
// it is, and handed as it is.
func TestPublishTokenAuth(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{Auth: registry.Token, TokenTTL: 90 * time.Second})
	src := deltaTree(t, 2, 128<<10)
	p := newPublisher(t, r.DockerConfig())
	_, ref := p.publish(src, "oci://"+r.Addr+"/hoist/app:v1", "--registry-ca", r.CAFile)
	if !slices.ContainsFunc(r.Issued(), func(i registry.Issued) bool {
		return slices.Contains(i.Scopes, "repository:hoist/app:pull,push")
	}) {
		t.Errorf("no token for pull,push on hoist/app was issued: %v", r.Issued())
	}
	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: p.docker})
	pub := readPublished(t, reg, ref)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := time.Now()
	cred, err := reg.PullCredential(ctx, ref)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	issued := r.Issued()
	last := issued[len(issued)-1]
	if cred.Scheme != "Bearer" || cred.Scope != "repository:hoist/app:pull" || !slices.Equal(last.Scopes, []string{"repository:hoist/app:pull"}) {
		t.Errorf("pull credential %s scoped %q (the token server granted %v); want a Bearer token for repository:hoist/app:pull", cred.Scheme, cred.Scope, last.Scopes)
	}
	if cred.Expires.Before(before.Add(90*time.Second)) || cred.Expires.After(after.Add(90*time.Second)) {
		t.Errorf("the token expires %v after the request, want 90s (expires_in)", cred.Expires.Sub(before))
	}
	blob := r.URL + "/v2/hoist/app/blobs/" + pub.Files[0].Digest
	for _, tc := range []struct {
		method, url string
		want        int
	}{
		{"GET", blob, 200},
		{"POST", r.URL + "/v2/hoist/app/blobs/uploads/", 401},
		{"GET", r.URL + "/v2/hoist/other/blobs/" + pub.Files[0].Digest, 401},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, nil)
		req.Header.Set("Authorization", cred.Scheme+" "+cred.Value)
		resp, err := r.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s with the pull credential: %s, want %d", tc.method, tc.url, resp.Status, tc.want)
		}
	}

	// A token of the user's own, for pushing another repository.
	tok := r.Token("repository:hoist/other:pull,push")
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte(tok+"\n"), 0o600)
	bare := newPublisher(t, "")
	_, otherRef := bare.publish(src, "oci://"+r.Addr+"/hoist/other:v1", "--registry-ca", r.CAFile, "--registry-token-file", file)
	byToken := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, TokenFile: file, DockerConfig: bare.docker})
	readPublished(t, byToken, otherRef)
	if cred, err := byToken.PullCredential(ctx, otherRef); err != nil || cred.Scheme != "Bearer" || cred.Value != tok || cred.Scope != "" || !cred.Expires.IsZero() {
		t.Errorf("pull credential with --registry-token-file: %+v %v; want that token, as it is", cred, err)
	}
	if r := bare.run("publish", src, "--to", "oci://"+r.Addr+"/hoist/app:v2", "--registry-ca", r.CAFile); r.code != 1 || !strings.Contains(r.stderr, "credentials") {
		t.Errorf("publish without credentials: %s", r)
	}
}

// TestPublishCredentialHelper: credentials come from a docker credential
// helper named for the registry in config.json (credHelpers), which hoist
// runs as docker does (docker-credential-NAME get, the server on stdin). A
// wrong password is one line that says to log in again.
func TestPublishCredentialHelper(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	bin := t.TempDir()
	asked := filepath.Join(t.TempDir(), "asked")
	helper := fmt.Sprintf(`#!/bin/sh
[ "$1" = get ] || exit 1
read -r server
echo "$server" >>%s
[ "$server" = %s ] || { echo "credentials not found in native keychain"; exit 1; }
printf '{"ServerURL":"%%s","Username":"%s","Secret":"%s"}\n' "$server"
`, asked, r.Addr, r.User, r.Password)
	os.WriteFile(filepath.Join(bin, "docker-credential-hoisttest"), []byte(helper), 0o755)
	docker := t.TempDir()
	os.WriteFile(filepath.Join(docker, "config.json"), []byte(`{"credHelpers":{"`+r.Addr+`":"hoisttest"}}`), 0o600)
	p := newPublisher(t, docker)
	p.env = append(p.env, "PATH="+bin+":"+os.Getenv("PATH"))
	src := deltaTree(t, 1, 128<<10)
	p.publish(src, "oci://"+r.Addr+"/hoist/app:v1", "--registry-ca", r.CAFile)
	if got := readFile(t, asked); !strings.Contains(got, r.Addr) {
		t.Errorf("the helper was asked for %q", got)
	}
	// A registry that issues no tokens: hosts would need the user's own
	// credentials, and are told so by the scheme.
	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: r.DockerConfig()})
	cred, err := reg.PullCredential(context.Background(), mustRef(t, "oci://"+r.Addr+"/hoist/app:v1"))
	if want := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password)); err != nil || cred.Scheme != "Basic" || cred.Value != want || !cred.Expires.IsZero() {
		t.Errorf("pull credential of a basic-auth registry: %+v %v; want the user's own, Basic", cred, err)
	}

	wrong := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(r.User + ":not-the-password"))
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{r.Addr: map[string]string{"auth": auth}}})
	os.WriteFile(filepath.Join(wrong, "config.json"), b, 0o600)
	run := newPublisher(t, wrong).run("publish", src, "--to", "oci://"+r.Addr+"/hoist/app:v2", "--registry-ca", r.CAFile)
	if run.code != 1 || strings.Count(run.stderr, "\n") != 1 || !strings.Contains(run.stderr, "refused the credentials") || !strings.Contains(run.stderr, "docker login "+r.Addr) {
		t.Errorf("publish with a wrong password: %s", run)
	}
}

// TestPublishRefusesAWrongCA: the registry's certificate is verified, with
// --registry-ca against that file's CAs only, else against the system's;
// a registry signed by another CA is refused before any request reaches
// it, in one line that says which flag fixes it.
func TestPublishRefusesAWrongCA(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	other := registry.Start(t, registry.Options{})
	p := newPublisher(t, r.DockerConfig())
	src := deltaTree(t, 1, 128<<10)
	to := "oci://" + r.Addr + "/hoist/app:v1"
	mark := len(r.Requests())
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--registry-ca", other.CAFile}, "its certificate is not signed by a CA of --registry-ca " + other.CAFile},
		{nil, "not signed by a CA this system trusts"},
	} {
		run := p.run(append([]string{"publish", src, "--to", to}, tc.flags...)...)
		if run.code != 1 || strings.Count(run.stderr, "\n") != 1 || !strings.Contains(run.stderr, tc.want) {
			t.Errorf("publish %v: %s; want exit 1 saying %q", tc.flags, run, tc.want)
		}
	}
	if reqs := r.Requests()[mark:]; len(reqs) != 0 {
		t.Errorf("a registry whose certificate was refused answered %v", reqs)
	}
	p.publish(src, to, "--registry-ca", r.CAFile)
}

// TestPublishInsecureRegistry: plain HTTP only to the registry
// --insecure-registry names, as docker's insecure-registries: without it,
// or naming another, the plain registry is refused, and the error names
// the flag.
func TestPublishInsecureRegistry(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{PlainHTTP: true, Auth: registry.Anonymous})
	p := newPublisher(t, "")
	src := deltaTree(t, 1, 128<<10)
	to := "oci://" + r.Addr + "/hoist/app:v1"
	for _, flags := range [][]string{nil, {"--insecure-registry", "127.0.0.1:1"}} {
		run := p.run(append([]string{"publish", src, "--to", to}, flags...)...)
		if run.code != 1 || !strings.Contains(run.stderr, "--insecure-registry "+r.Addr+" allows that") {
			t.Errorf("publish to a plain registry with %v: %s", flags, run)
		}
	}
	_, ref := p.publish(src, to, "--insecure-registry", "127.0.0.1:1,"+r.Addr)
	reg := registryFor(t, store.RegistryOptions{Insecure: []string{r.Addr}, DockerConfig: p.docker})
	sameTree(t, src, readBack(t, r, readPublished(t, reg, ref)))
	if cred, err := reg.PullCredential(context.Background(), ref); err != nil || cred.Scheme != "" {
		t.Errorf("pull credential of an anonymous registry: %+v %v; want none needed", cred, err)
	}
}
