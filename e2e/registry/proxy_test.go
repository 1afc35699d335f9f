package registry

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fetcher is a host tool that downloads a blob with basic auth, and its way
// to go on from a partial file.
type fetcher struct {
	name string
	// args is the command for url into out; resume continues out.
	args func(r *Registry, url, out string, resume bool) (env []string, argv []string)
}

var fetchers = []fetcher{
	{"curl", func(r *Registry, url, out string, resume bool) ([]string, []string) {
		argv := []string{"curl", "-sS", "-f", "--cacert", r.CAFile, "-u", r.User + ":" + r.Password, "-o", out}
		if resume {
			argv = append(argv, "-C", "-")
		}
		return nil, append(argv, url)
	}},
	// GNU wget retries a cut download by itself, with a Range request;
	// --tries=1 shows the steps one at a time.
	{"wget", func(r *Registry, url, out string, resume bool) ([]string, []string) {
		argv := []string{"wget", "-q", "--tries=1", "--ca-certificate=" + r.CAFile, "--user=" + r.User, "--password=" + r.Password, "-O", out}
		if resume {
			argv = append(argv, "-c")
		}
		return nil, append(argv, url)
	}},
	// Debian's busybox wget runs `openssl s_client -verify_return_error`
	// for https, which trusts OpenSSL's store (SSL_CERT_FILE) and, for an
	// address rather than a name, passes "-verify_ip IP:PORT" and fails:
	// it is given localhost.
	{"busybox wget", func(r *Registry, url, out string, resume bool) ([]string, []string) {
		basic := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password))
		argv := []string{"busybox", "wget", "-q", "--header", "Authorization: Basic " + basic, "-O", out}
		if resume {
			argv = append(argv, "-c")
		}
		return []string{"SSL_CERT_FILE=" + r.CAFile}, append(argv, strings.Replace(url, "//127.0.0.1:", "//localhost:", 1))
	}},
}

// TestCutBlobResumesWithRange: each host tool, its download cut by the
// proxy, keeps the bytes it got and gets the rest with a Range request.
func TestCutBlobResumesWithRange(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	data := randomBlob(t, 1<<20)
	digest := r.PushBlob(t, "hoist/a", data)
	for _, f := range fetchers {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			p := r.NewProxy(t)
			url := p.URL + "/v2/hoist/a/blobs/" + digest
			out := filepath.Join(t.TempDir(), "blob")
			const cut = 300000

			p.Cut(cut, 1)
			env, argv := f.args(r, url, out, false)
			if c := run(t, env, "", argv[0], argv[1:]...); c.code == 0 {
				t.Fatalf("%s through a proxy that cuts the blob: exit 0, want a failure", f.name)
			}
			if got := readFile(t, out); len(got) != cut || !bytes.Equal(got, data[:cut]) {
				t.Fatalf("%s kept %d bytes after the cut, want the first %d", f.name, len(got), cut)
			}
			env, argv = f.args(r, url, out, true)
			if c := run(t, env, "", argv[0], argv[1:]...); c.code != 0 {
				t.Fatalf("%s resuming: exit %d\n%s", f.name, c.code, c.stderr)
			}
			if got := readFile(t, out); !bytes.Equal(got, data) {
				t.Fatalf("%s resumed to %d bytes that are not the blob", f.name, len(got))
			}
			var ranged []ProxyRequest
			for _, q := range p.Requests() {
				if q.Range != "" && q.Status != 401 { // wget asks without credentials first
					ranged = append(ranged, q)
				}
			}
			want := ProxyRequest{Method: "GET", URI: "/v2/hoist/a/blobs/" + digest, Range: fmt.Sprintf("bytes=%d-", cut), Status: 206, Bytes: int64(len(data) - cut)}
			if len(ranged) != 1 || ranged[0] != want {
				t.Errorf("ranged requests through the proxy: %+v; want one, %+v", ranged, want)
			}
		})
	}
}

// TestCorruptedBlobKeepsItsLength: a tampering mirror's blob has the
// length and headers of the real one; only its digest tells.
func TestCorruptedBlobKeepsItsLength(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	data := randomBlob(t, 100000)
	digest := r.PushBlob(t, "hoist/a", data)
	p := r.NewProxy(t)
	p.Corrupt()
	out := filepath.Join(t.TempDir(), "blob")
	h, status, c := curl(t, r, "", "-u", r.User+":"+r.Password, "-o", out, p.URL+"/v2/hoist/a/blobs/"+digest)
	got := readFile(t, out)
	if status != 200 || c.code != 0 || len(got) != len(data) || h.Get("Docker-Content-Digest") != digest {
		t.Fatalf("GET through a corrupting proxy: %d, exit %d, %d bytes, digest header %q; want a normal-looking download",
			status, c.code, len(got), h.Get("Docker-Content-Digest"))
	}
	if Digest(got) == digest || !bytes.Equal(got[1:], data[1:]) {
		t.Errorf("the corrupted blob should differ from the real one in its first byte only")
	}
	if q := p.Requests(); len(q) != 1 || q[0].Fault != "corrupt" {
		t.Errorf("proxy requests %+v; want the one corrupted GET", q)
	}
}

// TestStalledBlobHoldsTheConnection: a stalled download sends its first
// bytes and then nothing, with the connection open, until the client gives
// up (curl's --speed-limit here); Clear cuts what is still held.
func TestStalledBlobHoldsTheConnection(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{})
	data := randomBlob(t, 100000)
	digest := r.PushBlob(t, "hoist/a", data)
	p := r.NewProxy(t)
	p.Stall(1000)
	out := filepath.Join(t.TempDir(), "blob")
	start := time.Now()
	_, _, c := curl(t, r, "", "-u", r.User+":"+r.Password, "-o", out, "--speed-limit", "1024", "--speed-time", "2", p.URL+"/v2/hoist/a/blobs/"+digest)
	if c.code != 28 || len(readFile(t, out)) != 1000 {
		t.Errorf("curl through a stalled proxy: exit %d after %v with %d bytes; want 28 (too slow) with 1000", c.code, time.Since(start), len(readFile(t, out)))
	}
	if n := p.BlobBytes(); n != 1000 {
		t.Errorf("BlobBytes() = %d, want 1000", n)
	}
	t.Logf("curl gave up after %v", time.Since(start))
	p.Clear()
	if c := run(t, nil, "", "curl", "-sS", "--cacert", r.CAFile, "-u", r.User+":"+r.Password, "-o", out, p.URL+"/v2/hoist/a/blobs/"+digest); c.code != 0 || !bytes.Equal(readFile(t, out), data) {
		t.Errorf("curl after Clear: exit %d\n%s", c.code, c.stderr)
	}
	os.Remove(out)
}
