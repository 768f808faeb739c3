package main

// Multi-call kubectl: when the binary is invoked as "kubectl" (a symlink)
// or as `kube-lab kubectl ...`, it is the kubectl of the pinned release, so
// client and server versions match and there is no second 100 MB binary.
// This follows k8s.io/kubernetes/cmd/kubectl/kubectl.go.

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

// runKubectl runs kubectl with args[0] as the program name; it exits the
// process on error, as kubectl does.
func runKubectl(args []string) {
	os.Args = append([]string{"kubectl"}, args[1:]...)
	// Apply -v early so klog works while the command is being built.
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
