package lock_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// Run a command on a host under its store lock: the host takes the lock,
// runs the command and releases the lock itself when the command exits.
// The README's library section is this code, from "ctx" to the end.
func ExampleLock_Run() {
	ctx := context.Background()
	// The target "local" is this machine through /bin/sh; a host over ssh is
	// transport.DialSSH(ctx, transport.SSHConfig{Target: "deploy@web1"}).
	var t transport.Transport = &transport.Local{}
	defer t.Close()
	// A scratch root, so that nothing in your home is touched; hosts use
	// lock.DefaultRoot, ~/.hoist.
	dir, err := os.MkdirTemp("", "hoist-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root, err := lock.ParseRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	l := lock.New(t, root)
	res, err := l.Run(ctx, []string{"echo", "deployed"}, lock.RunOptions{Wait: 25 * time.Minute, Stdout: os.Stdout})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit status", res.Status)
	// Output:
	// deployed
	// exit status 0
}

// Read the lock without changing anything.
func ExampleLock_Status() {
	dir, err := os.MkdirTemp("", "hoist-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	root, _ := lock.ParseRoot(dir)
	l := lock.New(&transport.Local{}, root)
	held, err := l.Acquire(context.Background(), 0, lock.Events{})
	if err != nil {
		log.Fatal(err)
	}
	s, err := l.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Locked, s.Record.Token == held.Token, s.Stealable())
	if err := l.Release(context.Background(), held.Token); err != nil {
		log.Fatal(err)
	}
	// Output:
	// true true false
}
