//go:build upgradefrom

package main

import (
	"flag"

	"k8s.io/client-go/rest"
)

// clientFlags: the release upgrades start from has no rate-limit flags; its client keeps
// controller-runtime's defaults, and an unknown flag fails as it does upstream.
type clientFlags struct{}

func (c *clientFlags) bind(*flag.FlagSet) {}

func (c *clientFlags) apply(*rest.Config) {}
