module github.com/hoistdev/hoist

go 1.26.0

require (
	al.essio.dev/pkg/shellescape v1.6.1
	github.com/google/uuid v1.6.0
	github.com/pkg/sftp v1.13.12
	github.com/rogpeppe/go-internal v1.16.0
	github.com/skeema/knownhosts v1.3.3
	golang.org/x/crypto v0.59.0
	golang.org/x/term v0.48.0
)

require (
	github.com/kr/fs v0.1.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
