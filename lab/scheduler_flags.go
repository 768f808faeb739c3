package main

// `kube-lab kube-scheduler-flags`: every flag of the pinned release's
// kube-scheduler command, one per line ("--name"), from the command itself
// (app.NewSchedulerCommand, as cmd/kube-scheduler builds it, with JSON
// logging registered as its main package does). The
// sched-kube-scheduler-flags test checks toy-scheduler accepts each one.

import (
	"fmt"
	"sort"

	"github.com/spf13/pflag"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json and its --log-json-* flags
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func printKubeSchedulerFlags() int {
	var names []string
	app.NewSchedulerCommand().Flags().VisitAll(func(f *pflag.Flag) {
		names = append(names, "--"+f.Name)
	})
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n)
	}
	return 0
}
