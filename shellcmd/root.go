package shellcmd

// Root is a store's root as a fragment needs it (package lock's Root, which
// users give): Path is relative to the host's $HOME when Home is set, and
// absolute otherwise.
type Root struct {
	Home bool
	Path string
}
