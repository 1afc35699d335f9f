package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

type pushOptions struct {
	name       string
	activate   bool
	keepSetuid bool
	noCache    bool
	maxSize    int64
	wait       time.Duration
	streams    int
	via        string
	checkFlags
}

func (a *app) pushCommand() *cobra.Command {
	o := pushOptions{wait: defaultWait, maxSize: store.DefaultMaxSize, checkFlags: newCheckFlags()}
	c := &cobra.Command{
		Use:   "push ARTIFACT|-|oci://REGISTRY/REPO:TAG|@DIGEST",
		Short: "install a directory, an archive or a tar on stdin as a runtime",
		Long: `push installs ARTIFACT on each host as runtime <name>-<digest>: a directory, a
.tar, .tar.gz, .tgz, .tar.xz, .tar.zst or .zip file, or - for a tar (plain or
compressed) on standard input, which needs --name. The same tree always gets
the same id; a runtime already on a host costs one host command and uploads
nothing. The upload happens outside the lock; the promotion waits for it.
Files the host already holds in other runtimes are copied there instead of
sent. An upload that was stopped or cut off is resumed by the next push of
the same artifact. Setuid and setgid bits are stripped unless --keep-setuid.

With --via oci://REGISTRY/REPO[:TAG] (the runtime published there with hoist
publish; the tag defaults to its id), or with oci://... as the artifact (the
workstation then never holds the files), each host fetches what it lacks
straight from the registry with curl or wget, verifying every blob by its
SHA-256; a host that cannot is sent the bytes over SSH, and says why.`,
		Example: `  hoist -H deploy@web1 push ./node-v22-linux-x64.tar.gz --activate
  hoist -H web1,web2 push ./build -n app --activate
  git archive HEAD | hoist -H web1 push - --name app
  hoist -H web1,web2 push ./build -n app --via oci://registry.example.com/team/app
  hoist --hosts-file fleet push oci://registry.example.com/team/app@sha256:... --activate`,
		Args: exactArgs(1, "ARTIFACT|- (a directory, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst, .zip, - for a tar on standard input, or oci://REGISTRY/REPO:TAG|@DIGEST)"),
		RunE: func(_ *cobra.Command, args []string) error { return a.push(args[0], o) },
	}
	f := c.Flags()
	f.StringVarP(&o.name, "name", "n", "", "runtime `NAME` (default: the artifact's file name without its extension)")
	f.BoolVar(&o.activate, "activate", false, "switch current to the runtime once it is in place")
	f.BoolVar(&o.keepSetuid, "keep-setuid", false, "keep setuid and setgid bits (stripped by default)")
	f.BoolVar(&o.noCache, "no-cache", false, "hash every file of a directory, without the digests kept from earlier pushes")
	f.Var(sizeValue{&o.maxSize}, "max-size", "refuse a runtime whose files come to more than `SIZE`, before reading them (K, M, G, T: binary units)")
	f.Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock at promotion; 0 makes one attempt")
	o.checkFlags.add(f)
	f.IntVar(&o.streams, "streams", 0, "upload over `N` SFTP channels at once, 1 to 8 (default: from the artifact's size and the measured round trip)")
	f.StringVar(&o.via, "via", "", "hosts fetch the runtime from `oci://REGISTRY/REPO[:TAG|@DIGEST]`, where hoist publish put it (default tag: its id)")
	return a.holdFlag(c)
}

// fromStdin is the ARTIFACT that reads a tar from standard input.
const fromStdin = "-"

func (a *app) push(source string, o pushOptions) error {
	if o.streams < 0 || o.streams > transport.MaxStreams {
		return usageErr("--streams %d: give 1 to %d, or leave it out to size it from the round trip", o.streams, transport.MaxStreams)
	}
	checks, err := o.checks()
	if err != nil {
		return err
	}
	if checks.Sequenced() && !o.activate {
		return usageErr("--restart and the check flags go with --activate")
	}
	if o.name != "" && !store.ValidName(o.name) {
		return usageErr("--name %q: use letters, digits and . _ + -, at most 64, starting with a letter or digit", o.name)
	}
	var art *store.Artifact
	var via *store.Via
	viaRef := o.via
	if strings.HasPrefix(source, "oci://") {
		if o.via != "" || o.name != "" || o.keepSetuid || o.noCache {
			return usageErr("push %s: a published runtime has its name and modes; leave out --via, --name, --keep-setuid and --no-cache", source)
		}
		viaRef = source
	}
	var ref store.OCIRef
	if viaRef != "" {
		var err error
		if ref, err = store.ParseOCIRef(viaRef); err != nil {
			return usageErr("%v", err)
		}
		if viaRef == source && ref.Tag == "" && ref.Digest == "" {
			return usageErr("push %s: give the tag or the digest publish printed (oci://REGISTRY/REPO:TAG or @sha256:...)", source)
		}
	}
	if viaRef != source {
		var err error
		art, err = a.openArtifact("push", source, store.OpenOptions{Name: o.name, KeepSetuid: o.keepSetuid, NoCache: o.noCache, MaxSize: o.maxSize}, "nothing was sent to any host")
		if err != nil {
			return err
		}
		defer art.Close()
		if ref.Tag == "" && ref.Digest == "" {
			ref.Tag = art.ID()
		}
	}
	id := ""
	if art != nil {
		id = art.ID()
	}
	if viaRef != "" {
		reg, err := a.registry()
		if err != nil {
			return err
		}
		err = a.untilSignal(func(ctx context.Context) (err error) {
			via, err = reg.Via(ctx, ref, store.ReadOptions{MaxSize: o.maxSize})
			return err
		})
		if s := a.caught(); s != nil {
			return fmt.Errorf("%s: stopped (signal: %v); nothing was sent to any host", ref, s)
		}
		if err != nil {
			return fmt.Errorf("%w; nothing was sent to any host", err)
		}
		if art != nil && via.Published.ID != art.ID() {
			return fmt.Errorf("%s holds %s, not %s: hoist publish %s --to %s first; nothing was sent to any host", ref, via.Published.ID, art.ID(), source, ref)
		}
		id = via.Published.ID
		if len(via.Published.Setuid) > 0 {
			a.note("%s: installed with setuid or setgid, as published: %s", ref, listOrNone(via.Published.Setuid))
		}
		if len(via.Published.Writable) > 0 {
			a.note("%s: installed writable by others, as published: %s", ref, listOrNone(via.Published.Writable))
		}
	}
	bars := a.newProgress()
	defer bars.stop()
	if art != nil {
		bars.artifact = filesOf(art)
	} else {
		bars.artifact = fmt.Sprintf("%d entries of %s", via.Published.Entries, size(via.Published.Size))
	}
	var stripped, writable []string
	if art != nil {
		stripped, writable = art.Stripped, art.Writable
	}
	return a.storeCommand(func(ctx context.Context, s *store.Store, stop <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		h := bars.host(name, o.wait)
		res, err := s.Push(ctx, art, store.PushOptions{
			Via: via,
			// A health-checked switch is a command of its own, after
			// the promotion (docs/rollout.md).
			Activate: o.activate && !checks.Sequenced(),
			Force:    checks.Force,
			Wait:     o.wait,
			Streams:  o.streams,
			Events:   h.events(),
			Stop:     stop,
			Starting: h.starting,
			Progress: h.progress,
			Uploaded: func(int64) { h.uploadEnded() },
		})
		obj := &output.Push{ID: id, Stripped: stripped, Writable: writable}
		r := result{outcome: outcome{err: err}, json: obj}
		if res == nil {
			h.finish("failed", false)
			return r
		}
		a.log.Debug("pushed", "host", name, "id", id, "uploaded_bytes", res.Uploaded, "present", res.Present,
			"promoted", res.Promoted, "activated", res.Activated, "execs", res.Execs)
		obj.Pushed = &output.Pushed{Present: res.Present, Promoted: res.Promoted, UploadedBytes: res.Uploaded,
			Activated: res.Activated, Previous: res.Previous, Execs: res.Execs,
			ResumedAt: res.Resumed, ReusedFiles: res.Reused,
			FetchedBlobs: res.Fetched, FetchedBytes: res.FetchedBytes, FetchResumes: res.FetchResumes,
			FetchTool: res.FetchTool, Fallback: res.Fallback, SentFromRegistry: res.FromRegistry,
			Settled: settlesJSON(res.Settled)}
		// A failed one is err, the host's ERROR.
		_ = a.settles(name, res.Settled)
		if err != nil {
			h.finish("failed", false)
			return r
		}
		var hl *store.Health
		if checks.Sequenced() {
			checks := checks
			checks.Stop = stop
			hl, err = s.ActivateChecked(ctx, res.ID, checks, o.wait, h.events())
			obj.Health = healthJSON(hl)
			if hl != nil {
				res.Activated, res.Previous = hl.Current == res.ID, hl.From
				obj.Activated, obj.Previous = res.Activated, res.Previous
				_ = a.settles(name, hl.Settled) // a failed one is err
				obj.Settled = append(obj.Settled, settlesJSON(hl.Settled)...)
			}
			obj.Execs++
			if err != nil {
				r.err = err
				h.finish("failed its checks", false)
				return r
			}
		}
		var what []string
		if res.Present {
			what = append(what, "already present, nothing uploaded")
		} else if via != nil {
			if res.Fetched > 0 {
				f := fmt.Sprintf("fetched %d blobs (%s) from the registry with %s", res.Fetched, size(res.FetchedBytes), res.FetchTool)
				if res.FetchResumes > 0 {
					f += fmt.Sprintf(", %d resumed with Range", res.FetchResumes)
				}
				what = append(what, f)
			}
			if res.Fallback != "" {
				from := ""
				if res.FromRegistry {
					from = ", fetched from the registry by this machine"
				}
				what = append(what, fmt.Sprintf("sent %s over SSH%s, since the host could not fetch it: %s", size(res.Uploaded), from, printable(res.Fallback)))
			}
			if res.Reused > 0 {
				what = append(what, fmt.Sprintf("%d files copied on the host", res.Reused))
			}
		} else {
			what = append(what, "uploaded "+size(res.Uploaded))
			if res.Resumed > 0 {
				what = append(what, "resumed at "+size(res.Resumed))
			}
			if res.Reused > 0 {
				what = append(what, fmt.Sprintf("%d files copied on the host", res.Reused))
			}
		}
		if res.Promoted {
			what = append(what, "promoted")
		}
		if res.Activated {
			what = append(what, "active")
		}
		if l := healthLine(hl); l != "" {
			what = append(what, l)
		}
		h.finish(strings.Join(what, ", "), true)
		r.data = fmt.Sprintf("%s: %s %s", name, id, strings.Join(what, ", "))
		return r
	})
}

// filesOf says what an artifact holds: "3 files of 22 B".
func filesOf(art *store.Artifact) string {
	n := 0
	for _, e := range art.Entries {
		if e.Type == 'f' {
			n++
		}
	}
	files := "files"
	if n == 1 {
		files = "file"
	}
	return fmt.Sprintf("%d %s of %s", n, files, size(art.Size))
}

// openArtifact reads and hashes the artifact of push or publish (cmd): a
// signal stops it at once, since that may take long (a large tree, a slow
// disk). nothing says what the command did not do when it fails. It notes
// the bits it stripped and the entries writable by others.
func (a *app) openArtifact(cmd, source string, opts store.OpenOptions, nothing string) (*store.Artifact, error) {
	if source == fromStdin && opts.Name == "" {
		return nil, usageErr("%s -: a stream has no file name; give --name", cmd)
	}
	var art *store.Artifact
	err := a.untilSignal(func(ctx context.Context) (err error) {
		if source == fromStdin {
			art, err = store.OpenReader(ctx, os.Stdin, opts)
		} else {
			art, err = store.OpenWith(ctx, source, opts)
		}
		return err
	})
	if s := a.caught(); s != nil {
		if art != nil {
			art.Close()
		}
		return nil, fmt.Errorf("%s: stopped while it was being read (signal: %v); %s", source, s, nothing)
	}
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, nothing)
	}
	a.log.Debug("artifact", "id", art.ID(), "entries", len(art.Entries), "bytes", art.Size, "digest", art.Digest)
	if len(art.Stripped) > 0 {
		a.note("%s: setuid and setgid removed from %s (%s --keep-setuid keeps them)", source, listOrNone(art.Stripped), cmd)
	}
	if len(art.Writable) > 0 {
		a.note("%s: installed writable by others, as the artifact says: %s", source, listOrNone(art.Writable))
	}
	return art, nil
}
