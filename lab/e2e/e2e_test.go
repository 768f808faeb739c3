// Package e2e runs Kubernetes' own sig-scheduling end-to-end tests, from the
// pinned release, against whatever scheduler serves "default-scheduler" on
// the cluster named by --kubeconfig. `./dev e2e` builds this with
// `go test -c`, starts a lab with toy-scheduler in kube-scheduler's place and
// runs the binary; see test/e2e/README.md.
//
// Only the scheduling tests are linked in: importing the whole e2e tree
// (as upstream's e2e.test does) would triple the build for tests we never
// select.
package e2e

import (
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"

	// The tests themselves: they register with Ginkgo when imported.
	_ "k8s.io/kubernetes/test/e2e/scheduling"

	// The framework's optional parts the scheduling tests expect: node
	// readiness checks before the suite, and metrics/debug hooks.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
)

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// TestSchedulingE2E hands control to Ginkgo, which runs the specs selected
// by --ginkgo.focus / --ginkgo.skip (the defaults live in ./dev e2e).
func TestSchedulingE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suite, reporter := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "toy-scheduler: Kubernetes sig-scheduling e2e", suite, reporter)
}
