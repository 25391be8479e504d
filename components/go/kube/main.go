// Command kube is a multi-call binary holding the Kubernetes control-plane
// components that the tfjob-kit local cluster runs. Linking one binary instead
// of three saves most of the (memory-hungry) link time.
//
// The component is chosen by the basename of argv[0] (so symlinks named
// kube-apiserver, kube-controller-manager and kube-scheduler work, which is
// what kwokctl's binary runtime expects) or, failing that, by the first
// argument: `kube kube-apiserver --help`.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	_ "time/tzdata" // CronJob time zones

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler": func() *cobra.Command {
		return scheduler.NewSchedulerCommand()
	},
}

func names() string {
	out := make([]string, 0, len(components))
	for n := range components {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func main() {
	name := filepath.Base(os.Args[0])
	newCommand, ok := components[name]
	if !ok && len(os.Args) > 1 {
		if newCommand, ok = components[os.Args[1]]; ok {
			os.Args = append(os.Args[:1], os.Args[2:]...)
		}
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: %s <component> [flags]\ncomponents: %s\n", name, names())
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
