package lock

import (
	"os"
	"os/user"
)

// whoAmI is user@host of this client, for the owner record.
func whoAmI() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}
