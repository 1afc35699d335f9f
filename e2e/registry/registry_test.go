package registry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBlobPushHeadRangeWithCurl pushes a blob with curl over TLS and basic
// auth and reads it back: what docker-registry 2.8.2 answers to the calls
// hoist's publish and the hosts' fetch make.
func TestBlobPushHeadRangeWithCurl(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	dir := t.TempDir()
	data := randomBlob(t, 1<<20)
	digest := Digest(data)
	file := writeFile(t, dir, "blob", data)
	auth := []string{"-u", r.User + ":" + r.Password}
	blobURL := r.URL + "/v2/hoist/a/blobs/" + digest

	// Without credentials: a basic challenge.
	if h, status, _ := curl(t, r, "", "-o", "/dev/null", r.URL+"/v2/"); status != 401 || h.Get("Www-Authenticate") != `Basic realm="hoist-e2e"` {
		t.Errorf("GET /v2/ without credentials: %d, WWW-Authenticate %q; want 401, a basic challenge", status, h.Get("Www-Authenticate"))
	}

	// A single POST carrying the blob and its digest is not taken as an
	// upload: 2.8.2 opens a session (202) and drops the body.
	h, status, c := curl(t, r, "", append(auth, "-o", "/dev/null", "-X", "POST", "-H", "Content-Type: application/octet-stream",
		"--data-binary", "@"+file, r.URL+"/v2/hoist/a/blobs/uploads/?digest="+digest)...)
	if status != 202 || h.Get("Location") == "" {
		t.Fatalf("POST uploads with digest: %d (Location %q); want 202 and a session\n%s", status, h.Get("Location"), c.stderr)
	}
	// The session's PUT with the digest completes it.
	h, status, c = curl(t, r, "", append(auth, "-o", "/dev/null", "-X", "PUT", "-H", "Content-Type: application/octet-stream",
		"--data-binary", "@"+file, h.Get("Location")+"&digest="+digest)...)
	if status != 201 || h.Get("Docker-Content-Digest") != digest {
		t.Fatalf("PUT upload: %d, Docker-Content-Digest %q; want 201, %s\n%s", status, h.Get("Docker-Content-Digest"), digest, c.stderr)
	}

	h, status, _ = curl(t, r, "", append(auth, "-I", blobURL)...)
	want := map[string]string{
		"Content-Length":        strconv.Itoa(len(data)),
		"Docker-Content-Digest": digest,
		"Accept-Ranges":         "bytes",
		"Etag":                  `"` + digest + `"`,
		"Cache-Control":         "max-age=31536000",
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("HEAD blob: %s %q, want %q", k, h.Get(k), v)
		}
	}
	if status != 200 {
		t.Errorf("HEAD blob: %d, want 200", status)
	}

	// The filesystem driver cannot redirect: the registry serves the bytes.
	_, status, _ = curl(t, r, "", append(auth, "-o", filepath.Join(dir, "whole"), blobURL)...)
	if got := readFile(t, filepath.Join(dir, "whole")); status != 200 || !bytes.Equal(got, data) {
		t.Errorf("GET blob: %d, %d bytes; want 200 and the blob (no redirect)", status, len(got))
	}

	h, status, _ = curl(t, r, "", append(auth, "-o", filepath.Join(dir, "part"), "-H", "Range: bytes=1000-1999", blobURL)...)
	if got := readFile(t, filepath.Join(dir, "part")); status != 206 || !bytes.Equal(got, data[1000:2000]) ||
		h.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(data)) {
		t.Errorf("GET blob, Range bytes=1000-1999: %d, Content-Range %q, %d bytes; want 206 and those bytes", status, h.Get("Content-Range"), len(got))
	}

	// A range from the blob's end (resuming a blob already whole) gets a
	// 416 that declares the whole blob's length and sends a short text:
	// curl reports a broken transfer (18 over HTTP/1.1, 92 over HTTP/2).
	// A host must not resume a blob it holds whole.
	h, status, c = curl(t, r, "", append(auth, "--http1.1", "-o", "/dev/null", "-H", fmt.Sprintf("Range: bytes=%d-", len(data)), blobURL)...)
	if status != 416 || h.Get("Content-Length") != strconv.Itoa(len(data)) || c.code != 18 {
		t.Errorf("GET blob, Range from its end: %d, Content-Length %q, curl exit %d; want 416, %d, 18 (2.8.2's broken 416)",
			status, h.Get("Content-Length"), c.code, len(data))
	}

	reqs := r.Requests()
	var puts, heads int
	for _, q := range reqs {
		switch {
		case q.Method == "PUT" && q.Status == 201:
			puts++
		case q.Method == "HEAD" && q.Status == 200:
			heads++
		}
	}
	if puts != 1 || heads != 1 {
		t.Errorf("Requests(): %d PUT 201 and %d HEAD 200, want 1 each: %v", puts, heads, reqs)
	}
}

// TestCrossRepositoryMount: a blob in one repository is linked into
// another without its bytes (201) when the client names the repository
// holding it; otherwise the registry opens an upload session (202). A
// repository's blobs are its own: HEAD elsewhere answers 404.
func TestCrossRepositoryMount(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	digest := r.PushBlob(t, "hoist/a", randomBlob(t, 4096))
	auth := []string{"-u", r.User + ":" + r.Password, "-o", "/dev/null"}

	cases := []struct {
		repo, query string
		status      int
	}{
		{"hoist/b", "mount=" + digest + "&from=hoist/a", 201},
		{"hoist/c", "mount=" + digest + "&from=hoist/elsewhere", 202},
		{"hoist/d", "mount=" + digest, 202}, // no "from": 2.8.2 does not look for it
	}
	for _, tc := range cases {
		h, status, _ := curl(t, r, "", append(auth, "-X", "POST", r.URL+"/v2/"+tc.repo+"/blobs/uploads/?"+tc.query)...)
		if status != tc.status {
			t.Errorf("POST %s/blobs/uploads/?%s: %d, want %d", tc.repo, tc.query, status, tc.status)
		}
		if tc.status == 201 && h.Get("Location") != r.URL+"/v2/"+tc.repo+"/blobs/"+digest {
			t.Errorf("mount into %s: Location %q", tc.repo, h.Get("Location"))
		}
	}
	for repo, want := range map[string]int{"hoist/a": 200, "hoist/b": 200, "hoist/c": 404} {
		if _, status, _ := curl(t, r, "", append(auth, "-I", r.URL+"/v2/"+repo+"/blobs/"+digest)...); status != want {
			t.Errorf("HEAD blob in %s: %d, want %d", repo, status, want)
		}
	}
}

// TestArtifactManifest stores an OCI 1.1 artifact manifest (artifactType,
// the empty config, a layer): 2.8.2 keeps it byte for byte, serves it only
// to clients that accept its media type, checks that its blobs exist in the
// repository, and has no referrers API.
func TestArtifactManifest(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	layer := r.PushBlob(t, "hoist/rt", randomBlob(t, 1000))
	manifest := func(config string) []byte {
		return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",`+
			`"artifactType":"application/vnd.hoist.runtime.v1",`+
			`"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"%s","size":2,"data":"e30="},`+
			`"layers":[{"mediaType":"application/vnd.hoist.pack.v1.tar","digest":"%s","size":1000}],`+
			`"annotations":{"dev.hoist.runtime.id":"test"}}`, config, layer)
	}
	dir := t.TempDir()
	const ociType = "Content-Type: application/vnd.oci.image.manifest.v1+json"
	auth := []string{"-u", r.User + ":" + r.Password}
	put := func(body []byte, ref string) (int, string) {
		_, status, c := curl(t, r, "", append(auth, "-X", "PUT", "-H", ociType, "--data-binary", "@"+writeFile(t, dir, "m", body),
			r.URL+"/v2/hoist/rt/manifests/"+ref)...)
		return status, c.stdout
	}

	// The empty config is a blob like any other: the inline data does not
	// spare pushing it.
	empty := Digest([]byte("{}"))
	if status, out := put(manifest(empty), "v1"); status != 400 || !strings.Contains(out, "MANIFEST_BLOB_UNKNOWN") {
		t.Errorf("PUT manifest before its config blob: %d %s; want 400 MANIFEST_BLOB_UNKNOWN", status, out)
	}
	r.PushBlob(t, "hoist/rt", []byte("{}"))
	m := manifest(empty)
	if status, out := put(m, "v1"); status != 201 {
		t.Fatalf("PUT manifest: %d %s; want 201", status, out)
	}

	got := filepath.Join(dir, "got")
	h, status, _ := curl(t, r, "", append(auth, "-o", got, "-H", "Accept: application/vnd.oci.image.manifest.v1+json", r.URL+"/v2/hoist/rt/manifests/v1")...)
	if !bytes.Equal(readFile(t, got), m) || status != 200 || h.Get("Docker-Content-Digest") != Digest(m) {
		t.Errorf("GET manifest: %d, digest %q; want 200, the bytes put, %s", status, h.Get("Docker-Content-Digest"), Digest(m))
	}
	if _, status, _ := curl(t, r, "", append(auth, "-o", "/dev/null", r.URL+"/v2/hoist/rt/manifests/v1")...); status != 404 {
		t.Errorf("GET manifest without Accept: %d, want 404 (2.8.2 serves OCI manifests only to clients accepting them)", status)
	}
	if _, status, _ := curl(t, r, "", append(auth, "-o", "/dev/null", r.URL+"/v2/hoist/rt/referrers/"+Digest(m))...); status != 404 {
		t.Errorf("GET referrers: %d, want 404 (no referrers API in 2.8.2)", status)
	}
}

// TestTamperedStorageIsServed: the registry serves a blob's file as it is
// on disk, under the blob's digest, without checking it: the way to get a
// registry that serves a wrong blob.
func TestTamperedStorageIsServed(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	data := randomBlob(t, 10000)
	digest := r.PushBlob(t, "hoist/a", data)
	bad := slices.Clone(data)
	bad[5000] ^= 1
	if err := os.WriteFile(r.BlobPath(digest), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := r.FetchBlob(t, "hoist/a", digest); !bytes.Equal(got, bad) {
		t.Errorf("GET of a blob whose file was changed: got %d bytes, not the changed file", len(got))
	}
}

// TestTokenAuth runs the bearer flow with curl: the challenge names the
// realm, service and scope; a token from the realm for that scope lets
// its holder pull, fed to curl on standard input, and nothing else.
func TestTokenAuth(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{Auth: Token})
	digest := r.PushBlob(t, "hoist/a", []byte("payload"))
	blobURL := r.URL + "/v2/hoist/a/blobs/" + digest

	h, status, _ := curl(t, r, "", "-o", "/dev/null", blobURL)
	wantChallenge := fmt.Sprintf(`Bearer realm=%q,service=%q,scope="repository:hoist/a:pull"`, r.TokenURL, r.Service)
	if status != 401 || h.Get("Www-Authenticate") != wantChallenge {
		t.Fatalf("GET blob without a token: %d, WWW-Authenticate %q; want 401, %s", status, h.Get("Www-Authenticate"), wantChallenge)
	}

	// The client's side of the flow: the realm, with the service and scope
	// of the challenge, answers a token to the user's credentials.
	_, status, c := curl(t, r, "", "-u", r.User+":"+r.Password, r.TokenURL+"?service="+r.Service+"&scope=repository:hoist/a:pull")
	var body struct {
		Token     string `json:"token"`
		ExpiresIn int    `json:"expires_in"`
	}
	if status != 200 || json.Unmarshal([]byte(c.stdout), &body) != nil || body.Token == "" || body.ExpiresIn != 60 {
		t.Fatalf("GET realm: %d %q; want 200 and a token for 60 s", status, c.stdout)
	}
	if issued := r.Issued(); len(issued) != 3 || !slices.Equal(issued[2].Scopes, []string{"repository:hoist/a:pull"}) {
		t.Errorf("Issued(): %v; want PushBlob's two tokens, then one for the pull scope", issued)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(strings.Split(body.Token, ".")[1])
	if !strings.Contains(string(claims), `"access":[{"type":"repository","name":"hoist/a","actions":["pull"]}]`) {
		t.Errorf("token claims %s; want pull on hoist/a only", claims)
	}

	config := fmt.Sprintf("header = \"Authorization: Bearer %s\"\n", body.Token)
	out := filepath.Join(t.TempDir(), "blob")
	if _, status, c := curl(t, r, config, "-K", "-", "-o", out, blobURL); status != 200 || string(readFile(t, out)) != "payload" {
		t.Errorf("GET blob with the token on stdin: %d\n%s", status, c.stderr)
	}
	h, status, _ = curl(t, r, config, "-K", "-", "-o", "/dev/null", "-X", "POST", r.URL+"/v2/hoist/a/blobs/uploads/")
	if status != 401 || !strings.Contains(h.Get("Www-Authenticate"), `error="insufficient_scope"`) {
		t.Errorf("POST upload with a pull token: %d, WWW-Authenticate %q; want 401 insufficient_scope", status, h.Get("Www-Authenticate"))
	}
	if _, status, _ := curl(t, r, config, "-K", "-", "-o", "/dev/null", r.URL+"/v2/hoist/other/blobs/"+digest); status != 401 {
		t.Errorf("GET a blob of another repository with the token: %d, want 401", status)
	}
}

// TestPlainHTTPAnonymous: a registry without TLS or credentials, and the
// harness's Stop and Restart, which keep the port and the storage.
func TestPlainHTTPAnonymous(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{PlainHTTP: true, Auth: Anonymous})
	if r.CAFile != "" || !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
		t.Fatalf("PlainHTTP: URL %q, CAFile %q", r.URL, r.CAFile)
	}
	digest := r.PushBlob(t, "hoist/a", []byte("plain"))
	addr := r.Addr
	r.Stop()
	if _, err := http.Get(r.URL + "/v2/"); err == nil {
		t.Errorf("GET /v2/ after Stop succeeded")
	}
	r.Restart()
	if r.Addr != addr {
		t.Errorf("Restart moved the registry from %s to %s", addr, r.Addr)
	}
	if got := r.FetchBlob(t, "hoist/a", digest); string(got) != "plain" {
		t.Errorf("blob after Restart: %q", got)
	}
}

// TestDockerConfig: the config.json DockerConfig writes is the one
// `docker login` leaves, which curl's basic auth accepts.
func TestDockerConfig(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	var cfg struct {
		Auths map[string]struct{ Auth string } `json:"auths"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(r.DockerConfig(), "config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	header := "Authorization: Basic " + cfg.Auths[r.Addr].Auth
	if _, status, _ := curl(t, r, "", "-o", "/dev/null", "-H", header, r.URL+"/v2/"); status != 200 {
		t.Errorf("GET /v2/ with the credentials of config.json: %d, want 200", status)
	}
}
