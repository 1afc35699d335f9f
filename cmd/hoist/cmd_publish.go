package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/hoistdev/hoist/cmd/hoist/output"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/store"
)

type publishOptions struct {
	name       string
	to         string
	keepSetuid bool
	noCache    bool
	maxSize    int64
	mountFrom  []string
}

func (a *app) publishCommand() *cobra.Command {
	o := publishOptions{maxSize: store.DefaultMaxSize}
	c := &cobra.Command{
		Use:   "publish ARTIFACT|- --to oci://REGISTRY/REPO[:TAG]",
		Short: "store a runtime in an OCI registry, for hosts to fetch from",
		Long: `publish stores ARTIFACT (as push reads it: a directory, an archive, or - for a
tar on standard input with --name) in an OCI registry as runtime
<name>-<digest>, the id push gives the same tree, tagged TAG (default: the
id). Each file of 64 KiB or more is a blob of its own; the rest travels in one
pack, so a small change publishes (and a host later fetches) little. Blobs
the repository holds are not sent again; blobs another repository holds (one
an earlier publish put them in, or --mount-from) are mounted from there.
It prints the id and the manifest's reference by digest. No host is
contacted. Credentials are read as docker reads them (DOCKER_CONFIG, else
~/.docker/config.json, with its credential helpers), or --registry-token-file.`,
		Example: `  hoist publish ./build --name app --to oci://registry.example.com/team/app:v1
  hoist publish ./node-v22.tar.gz --to oci://127.0.0.1:5000/rt --insecure-registry 127.0.0.1:5000
  hoist --json publish ./build -n app --to oci://registry.example.com/team/app --mount-from team/app-staging`,
		Args: exactArgs(1, "ARTIFACT|- (a directory, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst, .zip, or - for a tar on standard input)"),
		RunE: func(_ *cobra.Command, args []string) error { return a.publish(args[0], o) },
	}
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "store the runtime at `oci://REGISTRY/REPO[:TAG]` (default tag: the runtime id)")
	f.StringVarP(&o.name, "name", "n", "", "runtime `NAME` (default: the artifact's file name without its extension)")
	f.BoolVar(&o.keepSetuid, "keep-setuid", false, "keep setuid and setgid bits (stripped by default)")
	f.BoolVar(&o.noCache, "no-cache", false, "hash every file of a directory, without the digests kept from earlier pushes")
	f.Var(sizeValue{&o.maxSize}, "max-size", "refuse a runtime whose files come to more than `SIZE`, before reading them (K, M, G, T: binary units)")
	f.Var(listValue{&o.mountFrom, true}, "mount-from", "mount blobs the repository lacks from `REPO` of the same registry, where it holds them; repeatable or comma-separated")
	return c
}

func (a *app) publish(source string, o publishOptions) error {
	if len(a.g.hosts) > 0 || a.g.hostsFile != "" {
		return usageErr("publish contacts no host: it stores the runtime in the registry --to names; leave out -H and --hosts-file")
	}
	if o.to == "" {
		return usageErr("publish needs --to oci://REGISTRY/REPO[:TAG]")
	}
	to, err := store.ParseOCIRef(o.to)
	if err != nil {
		return usageErr("--to %v", err)
	}
	if to.Digest != "" {
		return usageErr("--to %s: publish makes the manifest's digest; give a tag, or none (the runtime id)", o.to)
	}
	for _, repo := range o.mountFrom {
		if r, err := store.ParseOCIRef("oci://" + to.Registry + "/" + repo); err != nil || r.Tag != "" || r.Digest != "" || r.Repository != repo {
			return usageErr("--mount-from %q: give a repository of %s, without a tag", repo, to.Registry)
		}
	}
	if o.name != "" && !store.ValidName(o.name) {
		return usageErr("--name %q: use letters, digits and . _ + -, at most 64, starting with a letter or digit", o.name)
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	nothing := "nothing was published"
	art, err := a.openArtifact("publish", source, store.OpenOptions{Name: o.name, KeepSetuid: o.keepSetuid, NoCache: o.noCache, MaxSize: o.maxSize}, nothing)
	if err != nil {
		return err
	}
	defer art.Close()
	var res *store.PublishResult
	err = a.untilSignal(func(ctx context.Context) (err error) {
		res, err = reg.Publish(ctx, art, to, store.PublishOptions{MountFrom: o.mountFrom})
		return err
	})
	if s := a.caught(); s != nil {
		return fmt.Errorf("%s: stopped (signal: %v); the blobs sent stay in the registry, the manifest was not put", o.to, s)
	}
	if err != nil {
		return err
	}
	tagged := res.Ref
	tagged.Digest = ""
	pinned := res.Ref
	pinned.Tag = ""
	a.log.Debug("published", "ref", tagged.String(), "manifest", res.Ref.Digest, "blobs", res.Blobs, "present", res.Present,
		"mounted", res.Mounted, "uploaded", res.Uploaded, "uploaded_bytes", res.UploadedBytes)
	if a.g.json {
		fmt.Fprint(a.stdout, jsonLine(&output.Publish{
			Result: output.Result{Host: res.Ref.Registry, OK: true}, ID: res.ID, Name: res.Name, Digest: res.Digest, Sum: res.Sum,
			Reference: tagged.String(), Tag: res.Ref.Tag, Manifest: res.Ref.Digest, Pinned: pinned.String(),
			Blobs: res.Blobs, PresentBlobs: res.Present, MountedBlobs: res.Mounted, UploadedBlobs: res.Uploaded,
			UploadedBytes: res.UploadedBytes, PackBytes: res.PackSize, ManifestBytes: res.ManifestSize,
			Stripped: art.Stripped, Writable: art.Writable,
		}))
		return nil
	}
	var what []string
	what = append(what, fmt.Sprintf("sent %d of %d blobs (%s)", res.Uploaded, res.Blobs, size(res.UploadedBytes)))
	if res.Present > 0 {
		what = append(what, fmt.Sprintf("%d there already", res.Present))
	}
	if res.Mounted > 0 {
		what = append(what, fmt.Sprintf("%d mounted from other repositories", res.Mounted))
	}
	a.note("%s: published %s, %s; pack %s", tagged.String(), res.ID, strings.Join(what, ", "), size(res.PackSize))
	fmt.Fprintf(a.stdout, "%s %s\n", res.ID, pinned.String())
	return nil
}

// registry reaches registries as the global flags say.
func (a *app) registry() (*store.Registry, error) {
	return store.NewRegistry(store.RegistryOptions{
		CAFile:    a.g.registryCA,
		Insecure:  a.g.insecureRegistries,
		TokenFile: a.g.registryTokenFile,
		UserAgent: "hoist/" + version(),
	})
}
