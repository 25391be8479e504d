//go:build !upgradefrom

package main

import (
	"flag"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// clientFlags are the API client's rate limits, flags of the pinned release
// (--kube-api-qps, --kube-api-burst; added in v1.9.0).
type clientFlags struct {
	qps, burst int
}

func (c *clientFlags) bind(fs *flag.FlagSet) {
	fs.IntVar(&c.qps, "kube-api-qps", 20, "Client QPS.")
	fs.IntVar(&c.burst, "kube-api-burst", 30, "Client burst.")
}

func (c *clientFlags) apply(cfg *rest.Config) {
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(float32(c.qps), c.burst)
}
