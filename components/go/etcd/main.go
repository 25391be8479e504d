// Command etcd runs the etcd server of the pinned go.etcd.io/etcd/server/v3
// release; tfjob-kit's local cluster uses it as the API server's storage.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
