package lock_test

import (
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/store"
)

// fetchStepTests are the steps of a push through a registry
// (shellcmd/sh/fetch.sh), against a real registry (e2e/registry).
var fetchStepTests = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// A push through a registry stopped once its host fetched everything,
	// still holding its stage's mark, long enough for the stage to look
	// abandoned: another push of the runtime cannot take the stage over
	// (it makes its own and promotes); the stopped push then finds the
	// runtime present, and both end with it.
	{"fetch.done", func(e *stepEnv) {
		art := e.bigArtifact(4 << 20)
		r := registry.Start(e.t, registry.Options{})
		reg, err := store.NewRegistry(store.RegistryOptions{CAFile: r.CAFile, DockerConfig: r.DockerConfig()})
		if err != nil {
			e.t.Fatal(err)
		}
		pub, err := reg.Publish(e.ctx(), art, store.OCIRef{Registry: r.Addr, Repository: "step/rt"}, store.PublishOptions{Record: store.NoRecord})
		if err != nil {
			e.t.Fatal(err)
		}
		via, err := reg.Via(e.ctx(), pub.Ref, store.ReadOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		a := e.lock("fetch.done")
		var ra *store.PushResult
		goOn := e.stopped(a, "fetch.done", func() (err error) {
			ra, err = store.New(a).Push(e.ctx(), art, store.PushOptions{Via: via})
			return err
		})
		time.Sleep(6 * time.Second) // the stage is quiet long enough to be resumed, had it its mark
		rb, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !rb.Promoted || rb.Resumed != 0 {
			e.t.Fatalf("the other push: %v %+v; want it promoted from a stage of its own", err, rb)
		}
		if err := goOn(); err != nil || !ra.Present || ra.Fetched != 2 {
			e.t.Fatalf("the stopped push: %v %+v; want it to have fetched the blob and the pack, and to find the runtime present", err, ra)
		}
		e.checkRuntime(art)
	}},
}

func init() { stepTests = append(stepTests, fetchStepTests...) }
