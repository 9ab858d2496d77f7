// Command etcd is the etcd server used by the tests and the local environment,
// built from the Go module proxy at the version pinned in go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
