// Package registry starts real OCI registries on loopback for hoist's
// end-to-end tests: Debian's docker-registry (CNCF distribution 2.8.2),
// one process per registry, with its own port, certificate, credentials and
// storage.
//
// # Quick start
//
//	func TestFetch(t *testing.T) {
//		t.Parallel()
//		r := registry.Start(t, registry.Options{})
//		digest := r.PushBlob(t, "hoist/rt", data)
//		// hosts fetch r.URL+"/v2/hoist/rt/blobs/"+digest, trusting
//		// r.CAFile, as r.User with r.Password
//		...
//	}
//
// Start needs docker-registry; when it is missing it fails the test (it
// never skips): run `make test`, which installs it. Everything Start
// creates is removed by t.Cleanup: the process (which also dies with the
// test binary, through a parent-death signal), the token server and the
// directory. Registries are independent, so tests may call t.Parallel
// freely.
//
// # What a registry is
//
// The registry listens on 127.0.0.1 on a port the kernel chose, with TLS
// (a certificate for IP 127.0.0.1 and the name localhost, signed by a CA
// made for that registry alone, whose certificate is CAFile) or, with
// Options.PlainHTTP, plain HTTP. Its filesystem storage is Storage; it
// serves a blob's file without checking it against its digest, so
// BlobPath gives a way to make it serve a wrong blob. The filesystem driver
// cannot redirect, so blobs come from the registry itself unless a Proxy
// redirects them (below).
//
// Options.Auth chooses how clients authenticate:
//   - Basic (the default): HTTP basic auth against an htpasswd file
//     holding User and Password (bcrypt), what a small private registry
//     runs.
//   - Token: bearer tokens, as Docker Hub and the cloud registries do. A
//     401 names the realm TokenURL, the Service and the scope the request
//     needed; the token server at TokenURL (in the test process, TLS with a
//     certificate from the same CA) gives User a JWT for the scopes asked
//     for, valid Options.TokenTTL (60 s by default), and the registry
//     accepts only its tokens. Token fetches one as a client does; Issued
//     lists the scopes granted so far.
//   - Anonymous: anyone pulls and pushes.
//
// DockerConfig writes the config.json that `docker login` would leave, for
// code that reads credentials as docker does (DOCKER_CONFIG).
//
// # Seeing what happened
//
// Requests lists every request the registry answered (method, URI,
// status, bytes sent), from its access log: the way to check that a blob
// was uploaded once, or which host tools fetched what. The whole log, JSON
// lines and the access log, is LogPath; when the test has failed, cleanup
// logs its tail.
//
// # Fault injection
//
// A Proxy (Registry.NewProxy) is a mirror in front of the registry that
// relays everything and, on demand, damages blob downloads: Cut ends the
// next downloads after a number of bytes (a client that resumes with a
// Range request then gets the rest), Stall holds them open after a number
// of bytes (a silently dead registry), Corrupt inverts their first byte (a
// tampering mirror: same length, same headers, wrong digest), Grow sends
// more than the blob, chunked (a crafted registry that would fill a
// client's disk), and RedirectTo answers them 307 to a BlobStore
// (Registry.NewBlobStore: the blobs at another address, as object storage
// serves them, recording the Authorization each request carried); OnlyFor
// limits the faults to clients of one User-Agent (the hosts' curl, not
// the workstation). Their
// certificates come from the registry's CA, so clients trust them as they
// trust the registry. Proxy.Requests and Proxy.BlobBytes say what the
// clients behind it asked for and got. For faults below HTTP, put the
// sshd package's TCP Proxy in front of Addr.
//
// Stop stops the registry (clients get connection refused) and Restart
// brings it back on the same port with the same storage.
//
// # What 2.8.2 does
//
// The tests of this package pin down the answers hoist relies on, as this
// version gives them: blob HEAD with Content-Length, Docker-Content-Digest,
// Accept-Ranges: bytes and ETag; Range requests (206); cross-repository
// mount (201 when "from" holds the blob, else an upload session, 202);
// OCI 1.1 artifact manifests with artifactType stored byte for byte, served
// only to clients that accept their media type; no referrers API; a single
// POST with the blob is not an upload (202, the body dropped); and a 416
// for a range starting at the blob's end that declares the whole blob's
// Content-Length, which clients report as a broken transfer.
package registry
