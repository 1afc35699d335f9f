package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// scratch is a store on this machine under a scratch root, and a
// directory to make runtimes in; done removes both.
func scratch() (s *store.Store, src string, done func()) {
	dir, err := os.MkdirTemp("", "hoist-example-")
	if err != nil {
		log.Fatal(err)
	}
	root, err := lock.ParseRoot(filepath.Join(dir, "root"))
	if err != nil {
		log.Fatal(err)
	}
	return store.New(lock.New(&transport.Local{}, root)), filepath.Join(dir, "app"), func() { os.RemoveAll(dir) }
}

// version writes a runtime of one program into src.
func version(src, v string) {
	bin := filepath.Join(src, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		log.Fatal(err)
	}
	hello := filepath.Join(bin, "hello")
	if err := os.WriteFile(hello, []byte("#!/bin/sh\necho hello from "+v+"\n"), 0o755); err != nil {
		log.Fatal(err)
	}
	// The id depends on the modes, not on this process's umask.
	for _, p := range []string{src, bin, hello} {
		if err := os.Chmod(p, 0o755); err != nil {
			log.Fatal(err)
		}
	}
}

// Push a runtime (a directory, or an archive) and make it current; pushed
// again, it is found on the host, verified, and nothing is sent.
func ExampleStore_Push() {
	s, src, done := scratch()
	defer done()
	version(src, "v1")
	ctx := context.Background()
	a, err := store.Open(src, "hello")
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Push(ctx, a, store.PushOptions{Activate: true, Wait: 25 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ID, "promoted:", res.Promoted, "current:", res.Activated)
	res, err = s.Push(ctx, a, store.PushOptions{Wait: 25 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ID, "already there:", res.Present, "bytes sent:", res.Uploaded)
	// Output:
	// hello-461c0bb49870 promoted: true current: true
	// hello-461c0bb49870 already there: true bytes sent: 0
}

// List the runtimes on the host, newest first, after pushing two versions
// and activating the first.
func ExampleStore_List() {
	s, src, done := scratch()
	defer done()
	ctx := context.Background()
	for _, v := range []string{"v1", "v2"} {
		version(src, v)
		a, err := store.Open(src, "hello")
		if err != nil {
			log.Fatal(err)
		}
		if _, err := s.Push(ctx, a, store.PushOptions{Activate: v == "v1", Wait: 25 * time.Minute}); err != nil {
			log.Fatal(err)
		}
	}
	runtimes, err := s.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, rt := range runtimes {
		fmt.Println(rt.ID, rt.Name, "current:", rt.Current)
	}
	// Output:
	// hello-7000e9c2c7c6 hello current: false
	// hello-461c0bb49870 hello current: true
}
