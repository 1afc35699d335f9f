package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// completionCommand is "hoist completion SHELL": cobra's scripts, which
// complete commands and flags, and runtimes through completeRuntimes.
func (a *app) completionCommand(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   "completion SHELL",
		Short: "print the shell completion script for bash, zsh, fish or powershell",
		Long: `completion prints a script that makes your shell complete hoist's commands,
flags, and the runtimes of the host named by -H for activate, pin, unpin and
rollback --to. The host is reached as every command reaches it (the OpenSSH
configuration, and the -F, -J, -o, -i of the line being completed), with a
2-second timeout, recording no host key and asking no passphrase; nothing is
offered if it does not answer, and only ids and names hoist could have made.
The bash script works with or without the bash-completion package.`,
		Example: `  source <(hoist completion bash)
  hoist completion zsh >"${fpath[1]}/_hoist"
  hoist completion fish >~/.config/fish/completions/hoist.fish`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	for _, sh := range []struct {
		name string
		gen  func(io.Writer) error
		load string
	}{
		{"bash", func(w io.Writer) error { return bashCompletion(root, w) }, "source <(hoist completion bash)"},
		{"zsh", root.GenZshCompletion, `hoist completion zsh >"${fpath[1]}/_hoist"`},
		{"fish", func(w io.Writer) error { return root.GenFishCompletion(w, true) }, "hoist completion fish | source"},
		{"powershell", root.GenPowerShellCompletionWithDesc, "hoist completion powershell | Out-String | Invoke-Expression"},
	} {
		c.AddCommand(&cobra.Command{
			Use:               sh.name,
			Short:             "the completion script for " + sh.name,
			Example:           "  " + sh.load,
			Args:              noArgs,
			ValidArgsFunction: cobra.NoFileCompletions,
			RunE:              func(*cobra.Command, []string) error { return sh.gen(a.stdout) },
		})
	}
	return c
}

// bashCompletion is cobra's bash script, which also works without the
// bash-completion package (bashWords).
func bashCompletion(root *cobra.Command, w io.Writer) error {
	if err := root.GenBashCompletionV2(w, true); err != nil {
		return err
	}
	_, err := io.WriteString(w, bashWords)
	return err
}

// bashWords replaces the function cobra's bash script calls to split the
// line into words when bash-completion's _init_completion is not there:
// cobra's calls bash-completion's _get_comp_words_by_ref, and so failed on
// every TAB where that package is not installed. This one uses it when it
// is there, and otherwise splits the line itself from what bash gives
// (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT), joining again the words
// bash split at "=" and ":" (COMP_WORDBREAKS), as "-n =:" asks: "--to=ID"
// and "host:port" are one word each. cur is the current word up to the
// cursor, as bash-completion gives it.
const bashWords = `
# Without the bash-completion package: the words of the line, from bash's
# COMP_WORDS, with the pieces bash split at "=" and ":" joined again.
__hoist_init_completion()
{
    COMPREPLY=()
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
        return
    fi
    local i piece last= blank line=${COMP_LINE:0:COMP_POINT}
    words=() cword=-1 cur=
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        piece=${COMP_WORDS[i]}
        blank=${line%%[![:blank:]]*}
        line=${line#"$blank"}
        if ((cword < 1)) || [[ -n $blank ]] || ! [[ $piece =~ ^[=:]+$ || $last =~ ^[=:]+$ ]]; then
            words[++cword]=$piece
            cur=
        else
            words[cword]+=$piece
        fi
        if ((i == COMP_CWORD)) && [[ $piece == "$line"* ]]; then
            cur+=$line
        else
            cur+=$piece
        fi
        line=${line#"$piece"}
        last=$piece
    done
    prev=${words[cword-1]-}
}
`

// completeTimeout bounds a completion that asks a host.
const completeTimeout = 2 * time.Second

// completeRuntimes offers the ids and names of the runtimes on the first
// target (-H, else local), dialled with completeTimeout; on any failure it
// offers nothing. It never records a host key.
func (a *app) completeRuntimes(_ *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if len(args) > 0 {
		return nil, none
	}
	a, ok := a.completedLine()
	if !ok {
		return nil, none
	}
	targets, err := a.targets()
	if err != nil {
		return nil, none
	}
	root, err := a.storeRoot()
	if err != nil {
		return nil, none
	}
	// The dial is bounded by its own timeouts; the context, a little
	// longer, bounds the listing (and never cuts a handshake short, which
	// races in the transport's dial).
	ctx, cancel := context.WithTimeout(context.Background(), completeTimeout+time.Second)
	defer cancel()
	var t transport.Transport = &transport.Local{}
	if targets[0] != transport.LocalTarget {
		// Reached as every other command reaches it (the OpenSSH
		// configuration, and the -F, -J, -o ... of the line being
		// completed), but quietly: no host key recorded, no passphrase
		// asked, no more time than completeTimeout per connection.
		quiet := func(cfg *transport.SSHConfig) {
			cfg.AcceptNewHostKey, cfg.Passphrase = false, nil
			cfg.DialTimeout = min(cfg.DialTimeout, completeTimeout)
			cfg.HandshakeTimeout = min(cfg.HandshakeTimeout, completeTimeout)
			if cfg.DialTimeout <= 0 {
				cfg.DialTimeout, cfg.HandshakeTimeout = completeTimeout, completeTimeout
			}
		}
		cfg, err := a.resolve(ctx, targets[0], quiet)
		if err != nil {
			return nil, none
		}
		quiet(&cfg)
		if t, err = transport.DialSSH(ctx, cfg); err != nil {
			return nil, none
		}
	}
	defer t.Close()
	list, err := store.New(lock.New(t, root)).List(ctx)
	if err != nil {
		return nil, none
	}
	var out []cobra.Completion
	names := map[string]bool{}
	for _, rt := range list { // newest first: a name means its first runtime
		// The host says what its runtimes are called: only what hoist
		// could have named them is offered, none of which any of the
		// shells would act on.
		if !store.ValidName(rt.Name) || !validID(rt.ID) {
			continue
		}
		if strings.HasPrefix(rt.ID, prefix) {
			out = append(out, cobra.CompletionWithDesc(rt.ID, fmt.Sprintf("%s, %s", rt.Name, size(rt.Size))))
		}
		if !names[rt.Name] && strings.HasPrefix(rt.Name, prefix) {
			names[rt.Name] = true
			out = append(out, cobra.CompletionWithDesc(rt.Name, "the newest "+rt.Name+": "+rt.ID))
		}
	}
	return out, none
}

// validID is whether id is a runtime id hoist makes: a name, "-", and 12
// lower-case hex digits.
func validID(id string) bool {
	name, digest, ok := cutLast(id, "-")
	return ok && store.ValidName(name) && len(digest) == 12 && strings.Trim(digest, "0123456789abcdef") == ""
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// completedLine is an app whose globals are the line being completed,
// parsed once: cobra's __complete parses the line's flags twice (once with
// "--" appended) into the same values, so the flags that accumulate (-H,
// -i, -o, and the ssh flags in the order given, with each target's place
// among them) would hold every value twice, and ssh -G would see "-J x -J
// x". The line is what follows the completion request's own word; the word
// being completed is part of it (a flag's value, or an argument), or, when
// the line does not parse with it, left out; ok is false when it does not
// parse either way.
func (a *app) completedLine() (_ *app, ok bool) {
	line := slices.Clone(a.args)
	if i := slices.IndexFunc(line, func(w string) bool {
		return w == cobra.ShellCompRequestCmd || w == cobra.ShellCompNoDescRequestCmd
	}); i >= 0 {
		line = slices.Delete(line, i, i+1)
	}
	for _, words := range [][]string{line, line[:max(len(line)-1, 0)]} {
		fresh := newApp(io.Discard, io.Discard, nil)
		fresh.args = a.args
		c, args, err := fresh.rootCommand().Find(words)
		if err == nil && c.ParseFlags(args) == nil {
			return fresh, true
		}
	}
	return nil, false
}
