package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
)

// storeCommand runs fn on every host with the store, stopping waits on the
// first interrupt and exiting on the second.
func (a *app) storeCommand(fn func(ctx context.Context, s *store.Store, stop <-chan struct{}) result) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	sig := a.interrupted(ctx, func(os.Signal) { close(stop); time.AfterFunc(stopGrace, cancel) }, func(os.Signal) { cancel() })
	code := a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
		return fn(ctx, store.New(l), stop)
	})
	if s := sig(); s != 0 {
		return s
	}
	return code
}

func (a *app) cmdPush(args []string) int {
	if len(args) != 1 {
		return a.usage(usageErr("push takes one artifact: a directory, .tar, .tar.gz or .tgz"))
	}
	if a.name != "" && !store.ValidName(a.name) {
		return a.usage(usageErr("--name %q: use letters, digits and . _ + -, at most 64, starting with a letter or digit", a.name))
	}
	art, err := store.OpenWith(args[0], store.OpenOptions{Name: a.name, KeepSetuid: a.keepSetuid})
	if err != nil {
		fmt.Fprintf(a.stderr, "hoist: %s; nothing was sent to any host\n", printable(err.Error()))
		return exitFailure
	}
	a.debug("local", "artifact %s: %d entries, %s, digest %s", art.ID(), len(art.Entries), size(art.Size), art.Digest)
	if len(art.Stripped) > 0 && !a.quiet {
		fmt.Fprintf(a.stderr, "hoist: %s: setuid and setgid removed from %s (push --keep-setuid keeps them)\n",
			args[0], printable(listOrNone(art.Stripped)))
	}
	if len(art.Writable) > 0 && !a.quiet {
		fmt.Fprintf(a.stderr, "hoist: %s: installed writable by others, as the artifact says: %s\n",
			args[0], printable(listOrNone(art.Writable)))
	}
	bars := a.newBars()
	defer bars.stop()
	return a.storeCommand(func(ctx context.Context, s *store.Store, stop <-chan struct{}) result {
		name := s.Lock().Host().Name()
		res, err := s.Push(ctx, art, store.PushOptions{
			Activate: a.activate,
			Wait:     a.wait,
			Events:   a.waitEvents(name),
			Stop:     stop,
			Progress: bars.progress(name),
		})
		bars.done(name)
		r := result{err: err, json: map[string]any{"id": art.ID(), "stripped": art.Stripped, "writable": art.Writable}}
		if res == nil {
			return r
		}
		r.json["present"], r.json["promoted"], r.json["uploaded_bytes"] = res.Present, res.Promoted, res.Uploaded
		r.json["activated"], r.json["previous"], r.json["execs"] = res.Activated, res.Previous, res.Execs
		if err != nil {
			return r
		}
		var what []string
		if res.Present {
			what = append(what, "already present, nothing uploaded")
		} else {
			what = append(what, "uploaded "+size(res.Uploaded))
		}
		if res.Promoted {
			what = append(what, "promoted")
		}
		if res.Activated {
			what = append(what, "active")
		}
		r.data = fmt.Sprintf("%s: %s %s", name, art.ID(), strings.Join(what, ", "))
		return r
	})
}

func (a *app) cmdList() int {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Host().Name()
		list, err := s.List(ctx)
		if err != nil {
			return result{err: err}
		}
		rows := []map[string]any{}
		var b strings.Builder
		if len(list) == 0 {
			fmt.Fprintf(&b, "%s: no runtimes", name)
		}
		for i, rt := range list {
			rows = append(rows, map[string]any{
				"id": rt.ID, "name": rt.Name, "size": rt.Size, "promoted": rt.Promoted.UTC().Format(time.RFC3339),
				"active": rt.Current, "previous": rt.Previous, "pinned": rt.Pinned,
			})
			var flags []string
			for _, f := range []struct {
				on   bool
				name string
			}{{rt.Current, "active"}, {rt.Previous, "previous"}, {rt.Pinned, "pinned"}} {
				if f.on {
					flags = append(flags, f.name)
				}
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s: %-32s %-20s %9s  %s  %s", name, rt.ID, rt.Name, size(rt.Size),
				rt.Promoted.Local().Format("2006-01-02 15:04"), strings.Join(flags, ","))
		}
		return result{data: strings.TrimRight(b.String(), " "), json: map[string]any{"runtimes": rows}}
	})
}

func (a *app) cmdSwitch(cmd string, args []string) int {
	if cmd == "activate" && len(args) != 1 || cmd == "rollback" && len(args) != 0 {
		return a.usage(usageErr("usage: hoist activate ID, hoist rollback"))
	}
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Host().Name()
		var sw *store.Switch
		var err error
		if cmd == "activate" {
			sw, err = s.Activate(ctx, args[0], a.wait, a.waitEvents(name))
		} else {
			sw, err = s.Rollback(ctx, a.wait, a.waitEvents(name))
		}
		if err != nil {
			return result{err: err}
		}
		prev := sw.Previous
		if prev == "" {
			prev = "nothing"
		}
		return result{
			data: fmt.Sprintf("%s: current is %s (was %s)", name, sw.Current, prev),
			json: map[string]any{"current": sw.Current, "previous": sw.Previous},
		}
	})
}

func (a *app) cmdPin(cmd string, args []string) int {
	if len(args) != 1 {
		return a.usage(usageErr("usage: hoist %s ID", cmd))
	}
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Host().Name()
		if err := s.Pin(ctx, args[0], cmd == "unpin", a.wait, a.waitEvents(name)); err != nil {
			return result{err: err}
		}
		return result{data: fmt.Sprintf("%s: %sned %s", name, cmd, args[0]), json: map[string]any{"id": args[0], cmd + "ned": true}}
	})
}

func (a *app) cmdGC() int {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Host().Name()
		// gc never waits: a busy store is reported as skipped, not waited on.
		res, err := s.GC(ctx, a.keep, a.dryRun, lock.Events{Stole: a.waitEvents(name).Stole})
		if err != nil {
			return result{err: err}
		}
		obj := map[string]any{"skipped": res.Skipped, "nothing_to_collect": res.NoStore, "dry_run": res.DryRun,
			"deleted": orEmpty(res.Deleted), "swept": orEmpty(res.Swept)}
		kept := []map[string]string{}
		for _, k := range res.Kept {
			kept = append(kept, map[string]string{"id": k.ID, "why": k.Why})
		}
		obj["kept"] = kept
		switch {
		case res.NoStore:
			return result{data: name + ": nothing to collect (no store)", json: obj}
		case res.Skipped:
			obj["holder"] = stateJSON(res.Holder)
			return result{data: fmt.Sprintf("%s: skipped: store busy (held by %s)", name, res.Holder.Describe()), json: obj}
		}
		verb := "deleted"
		if res.DryRun {
			verb = "would delete"
		}
		var parts []string
		for _, k := range res.Kept {
			parts = append(parts, k.ID+" ("+k.Why+")")
		}
		line := fmt.Sprintf("%s: kept %s; %s %s; swept %s", name, listOrNone(parts), verb,
			listOrNone(res.Deleted), listOrNone(res.Swept))
		return result{data: line, json: obj}
	})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
