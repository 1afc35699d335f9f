package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"

	"github.com/hoistdev/hoist/store/internal/oci"
)

// A runtime in an OCI registry (docs/store.md, "Publishing to a
// registry"): an artifact manifest of type ArtifactType whose layers are
// the pack (PackMediaType) and the runtime's files of ReuseMin or more, one
// blob each (FileMediaType), the blob's digest being the file's SHA-256.
const (
	ArtifactType  = "application/vnd.hoist.runtime.v1"
	PackMediaType = "application/vnd.hoist.runtime.pack.v1.tar"
	FileMediaType = "application/vnd.hoist.runtime.file.v1"
)

// The manifest's annotations, and a file layer's.
const (
	annID      = "dev.hoist.runtime.id"
	annName    = "dev.hoist.runtime.name"
	annDigest  = "dev.hoist.runtime.digest"  // the canonical form's SHA-256, hex
	annSum     = "dev.hoist.runtime.sum"     // the pack's SHA-256, hex: what a host verifies
	annSize    = "dev.hoist.runtime.size"    // the files' bytes
	annEntries = "dev.hoist.runtime.entries" // entries of the tree
	annModes   = "dev.hoist.file.modes"      // the modes a file blob is installed with, octal, comma-separated
)

// OCIRef names a repository of a registry, and in it a tag or a digest:
// oci://REGISTRY/REPO[:TAG|@DIGEST].
type OCIRef struct {
	Registry   string // host[:port]
	Repository string
	Tag        string // "" when none
	Digest     string // "sha256:<hex>" when the reference names one
}

// ParseOCIRef reads oci://REGISTRY/REPO[:TAG|@DIGEST].
func ParseOCIRef(s string) (OCIRef, error) {
	rest, ok := strings.CutPrefix(s, "oci://")
	if !ok {
		return OCIRef{}, fmt.Errorf("%q: want oci://REGISTRY/REPO[:TAG|@DIGEST]", s)
	}
	var r OCIRef
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		d, err := digest.Parse(rest[at+1:])
		if err != nil || d.Algorithm() != digest.SHA256 {
			return OCIRef{}, fmt.Errorf("%q: %q is not a sha256 digest (sha256:<64 hex digits>)", s, rest[at+1:])
		}
		r.Digest, rest = d.String(), rest[:at]
	}
	ref, err := registry.ParseReference(rest)
	if err != nil {
		return OCIRef{}, fmt.Errorf("%q: %v; want oci://REGISTRY/REPO[:TAG|@DIGEST]", s, err)
	}
	if ref.Reference != "" {
		if r.Digest != "" {
			return OCIRef{}, fmt.Errorf("%q: give a tag or a digest, not both", s)
		}
		if _, err := ref.Digest(); err == nil {
			r.Digest = ref.Reference
		} else {
			r.Tag = ref.Reference
		}
	}
	r.Registry, r.Repository = ref.Registry, ref.Repository
	return r, nil
}

// String is the reference as ParseOCIRef reads it.
func (r OCIRef) String() string {
	s := "oci://" + r.Registry + "/" + r.Repository
	switch {
	case r.Digest != "":
		s += "@" + r.Digest
	case r.Tag != "":
		s += ":" + r.Tag
	}
	return s
}

// reference is r for oras-go: the tag or digest in Reference.
func (r OCIRef) reference() registry.Reference {
	ref := registry.Reference{Registry: r.Registry, Repository: r.Repository, Reference: r.Tag}
	if r.Digest != "" {
		ref.Reference = r.Digest
	}
	return ref
}

// RegistryOptions say how to reach registries.
type RegistryOptions struct {
	// CAFile is a PEM file of the CAs the registry's certificate must
	// chain to, instead of the system's (--registry-ca).
	CAFile string
	// Insecure lists the registries (host[:port]) spoken to over plain
	// HTTP (--insecure-registry); every other one is HTTPS, verified.
	Insecure []string
	// TokenFile holds a bearer token used as it is, instead of docker's
	// credentials (--registry-token-file).
	TokenFile string
	// DockerConfig is the directory of docker's config.json; "" is
	// $DOCKER_CONFIG, else ~/.docker.
	DockerConfig string
	// UserAgent names hoist to registries.
	UserAgent string
}

// Registry reaches OCI registries: credentials read as docker, oras and
// crane read them ($DOCKER_CONFIG/config.json, else
// ~/.docker/config.json, with its credential helpers), or a token file;
// TLS verified against the system's CAs or RegistryOptions.CAFile.
type Registry struct {
	c *oci.Client
	o RegistryOptions
}

// NewRegistry reads the CA file and the credentials' configuration once.
func NewRegistry(o RegistryOptions) (*Registry, error) {
	c, err := oci.New(oci.Options{CAFile: o.CAFile, Insecure: o.Insecure, TokenFile: o.TokenFile, DockerConfig: o.DockerConfig, UserAgent: o.UserAgent})
	if err != nil {
		return nil, err
	}
	return &Registry{c: c, o: o}, nil
}

// PullCredential is what a host is given to fetch a published runtime's
// blobs: the value of an Authorization header for that one repository.
type PullCredential struct {
	// Scheme is "" when the registry lets anyone pull, "Bearer", or
	// "Basic" for a registry that issues no tokens: the user's own
	// credentials, which do not expire.
	Scheme string
	Value  string
	// Scope is what a token the registry issued grants
	// ("repository:REPO:pull"); "" for a token given as it is.
	Scope string
	// Expires is when the token stops being accepted (from just before
	// it was asked for: the token server's own clock is not trusted);
	// zero when unknown or never.
	Expires time.Time
}

// PullCredential gets a credential that lets a host pull ref's
// repository and nothing more, where the registry issues such tokens:
// scoped "repository:REPO:pull", with its lifetime.
func (r *Registry) PullCredential(ctx context.Context, ref OCIRef) (PullCredential, error) {
	t, err := r.c.PullToken(ctx, ref.reference())
	if err != nil {
		return PullCredential{}, err
	}
	return PullCredential(t), nil
}
