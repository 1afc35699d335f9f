package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/transport"
)

// Kept connections (docs/connections.md): when the OpenSSH configuration
// asks for ControlMaster and ControlPersist, hoist leaves a master holding
// the connection, which later commands use. The master is hoist itself,
// started again as "hoist mux serve".

func (a *app) muxCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "mux",
		Short: "check, stop or end the kept connection to each host",
		Long: `mux works on the connection hoist keeps to each host when the OpenSSH
configuration asks for one (ControlPath, with ControlMaster auto, autoask or
yes, and ControlPersist): a background hoist holds it, and later commands use
it instead of connecting. check says whether one is kept and how; stop makes
it take no more commands and end once the running ones have (ssh -O stop);
exit ends it now, and commands running through it lose contact (ssh -O
exit). See docs/connections.md.`,
		Example: `  hoist -H web1 mux check
  hoist -H web1,web2 mux stop`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	op := func(use, short, long string, o transport.MasterOp) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Long: long, Args: noArgs,
			Example: "  hoist -H web1 mux " + use + "\n  hoist -H web1,web2 mux " + use + " --json",
			RunE: func(*cobra.Command, []string) error {
				return a.stoppable(func(ctx context.Context) error {
					return a.eachTarget(ctx, func(ctx context.Context, target string, _ lock.Root) result {
						return a.muxHost(ctx, target, o)
					})
				})
			}}
	}
	c.AddCommand(
		op("check", "say whether a connection is kept to each host, and how (exit 1 where none is)",
			`check says, for each host, whether hoist keeps a connection to it: the
master's pid, the hoist that started it, since when, how it reached the host,
its clients, how long it stays without one (ControlPersist) and its socket;
and whether an OpenSSH master listens at ControlPath too (hoist keeps its own
next to it). A host with none exits 1, as ssh -O check does.`, transport.MasterCheck),
		op("stop", "take no more commands, end once the running ones have",
			`stop makes the master of each host stop listening at once (the next command
connects, or starts a new master) and end once the commands running through
it have ended, as ssh -O stop does. A host with no master is fine: nothing
to stop.`, transport.MasterStop),
		op("exit", "end the kept connection now (running commands lose contact)",
			`exit ends the master of each host now, as ssh -O exit does: commands running
through it lose contact with the host, an unknown outcome for them (exit
79), and what they started there goes on as after any lost connection. Use
stop to let them finish.`, transport.MasterExit),
		a.muxServeCommand())
	return c
}

func (a *app) muxHost(ctx context.Context, target string, op transport.MasterOp) result {
	host := transport.RedactTarget(target)
	if target == transport.LocalTarget {
		return result{host: host, outcome: outcome{err: errors.New("local is this machine: there is no connection to keep")}}
	}
	cfg, err := a.resolve(ctx, target, nil)
	if err != nil {
		return result{host: host, outcome: outcome{err: err}}
	}
	info, err := transport.ControlMaster(ctx, cfg, op)
	obj := &output.Mux{Master: info != nil}
	r := result{host: host, json: obj}
	if cfg.Control.Path != "" {
		obj.Socket = cfg.Control.Socket()
		if pid, err := transport.OpenSSHMaster(ctx, cfg.Control.Path); err == nil {
			obj.OpenSSHMasterPID = pid
			r.more = append(r.more, fmt.Sprintf("%s: an OpenSSH master (pid %d) listens at %s; hoist keeps its own (docs/connections.md)",
				host, pid, cfg.Control.Path))
		}
	}
	switch {
	case errors.Is(err, transport.ErrNoMaster) && op != transport.MasterCheck:
		r.data = fmt.Sprintf("%s: nothing to %s: %v", host, map[transport.MasterOp]string{transport.MasterStop: "stop", transport.MasterExit: "end"}[op], err)
		return r
	case err != nil:
		r.err = err
		return r
	}
	obj.PID, obj.Since, obj.Clients, obj.Version = info.PID, info.Since.UTC().Format(time.RFC3339), info.Clients, info.Version
	obj.PersistSeconds = int64(info.Persist / time.Second)
	switch op {
	case transport.MasterStop:
		r.data = fmt.Sprintf("%s: the master (pid %d) takes no more commands; it ends when its %d client(s) have", host, info.PID, info.Clients)
	case transport.MasterExit:
		r.data = fmt.Sprintf("%s: the master (pid %d) ends now", host, info.PID)
	default:
		persist := "until stopped"
		if info.Persist > 0 {
			persist = info.Persist.String() + " without a client"
		}
		state := "running"
		if info.Draining {
			state = "stopping"
		}
		r.data = fmt.Sprintf("%s: master %s (pid %d, hoist %s) since %s for %s@%s, %d client(s), kept %s; socket %s",
			host, state, info.PID, info.Version, info.Since.Format(time.DateTime), info.Reached.User, info.Reached.Addr,
			info.Clients, persist, info.Socket)
	}
	return r
}

// muxSpec is what a master needs to make the connection a command would
// have made: the target and every flag that goes into reaching it.
type muxSpec struct {
	Target     string                  `json:"target"`
	Options    transport.ConfigOptions `json:"options"`
	Identities []string                `json:"identities,omitempty"`
	KnownHosts string                  `json:"known_hosts,omitempty"`
	AcceptNew  bool                    `json:"accept_new,omitempty"`
}

// masterStarter starts a master for target, resolved as cfg, by running
// this hoist again as "hoist mux serve"; nil when it cannot tell where
// this hoist is.
func (a *app) masterStarter(target string, cfg transport.SSHConfig) func(context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	spec, err := json.Marshal(muxSpec{Target: target, Options: a.configOptions(target),
		Identities: a.g.identities, KnownHosts: a.g.knownHosts, AcceptNew: a.g.acceptNew})
	if err != nil {
		return nil
	}
	return func(ctx context.Context) error {
		// The socket is named on the command line for ps, as OpenSSH
		// names its master's ("ssh: PATH [mux]").
		return transport.StartMaster(ctx, cfg, exec.Command(self, "mux", "serve", cfg.Control.Socket()), spec)
	}
}

func (a *app) muxServeCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "serve SOCKET",
		Short:  "the background master (started by hoist itself)",
		Hidden: true,
		Args:   exactArgs(1, "serve SOCKET"),
		RunE: func(_ *cobra.Command, args []string) error {
			_, err := transport.ServeMaster(func(ctx context.Context, b []byte, cfg *transport.SSHConfig) error {
				var spec muxSpec
				if err := json.Unmarshal(b, &spec); err != nil {
					return err
				}
				cfg.Target, cfg.IdentityFiles, cfg.KnownHostsFile, cfg.AcceptNewHostKey =
					spec.Target, spec.Identities, spec.KnownHosts, spec.AcceptNew
				if err := transport.ResolveTarget(ctx, spec.Target, spec.Options, cfg); err != nil {
					return err
				}
				if cfg.Control.Socket() != args[0] {
					return fmt.Errorf("the configuration's socket is %s, not %s", cfg.Control.Socket(), args[0])
				}
				return nil
			}, version())
			if err != nil {
				// Said to the starter too; here for whoever ran it by hand
				// (a master's stderr is /dev/null).
				a.con.line("hoist: " + printable(err.Error()))
				return &codeError{code: exitFailure}
			}
			return nil
		},
	}
}
