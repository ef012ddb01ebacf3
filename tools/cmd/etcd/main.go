// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 at the version
// k8s.io/kubernetes itself requires, so the API servers talk to the etcd they were tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
