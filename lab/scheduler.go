package main

// The real kube-scheduler. The lab runs it as a child process (its own
// binary, re-executed as `kube-lab kube-scheduler ...`) because klog,
// configz, feature gates and the signal handler are process-global and
// would clash with the apiserver's; a child also has its own log file at
// its own verbosity, and its own CPU accounting for benchmarks.
//
// `kube-lab kube-scheduler` is also usable on its own, e.g. to run a second
// kube-scheduler with another --scheduler-name or with leader election.
//
// Invoked as `kube-scheduler` (build/kube-scheduler, a symlink to kube-lab),
// the binary is the pinned release's kube-scheduler command itself, every
// flag and --config included: cmd/kube-scheduler's main is the upstream
// command run by component-base's cli, and so is runUpstreamKubeScheduler.
// The benchmark runs it with a config file of its own, as a user would.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/cli"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // the client's metrics on /metrics, as upstream's binary has
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info, as upstream's binary has
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"toysched.dev/lab/ports"
)

// childScheduler is a kube-scheduler child process of the lab.
type childScheduler struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

func startChildScheduler(ctx context.Context, dir, kubeconfig string, qps float64, v int) (*childScheduler, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	port, err := ports.Free()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "kube-scheduler.log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "kube-scheduler",
		"--kubeconfig", kubeconfig,
		"--qps", strconv.FormatFloat(qps, 'g', -1, 64),
		"--port", strconv.Itoa(port),
		"-v", strconv.Itoa(v))
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Never outlive the lab, even if it is SIGKILLed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	c := &childScheduler{cmd: cmd, done: make(chan struct{}), log: logf}
	go func() {
		err := cmd.Wait()
		close(c.done)
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "kube-lab: kube-scheduler exited: %v (see %s)\n", err, logPath)
		}
	}()

	// Ready when its healthz answers (served on its own self-signed cert;
	// /healthz is always allowed without credentials).
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-c.done:
			return false, errors.New("exited during startup, see " + logPath)
		default:
		}
		resp, err := hc.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// stop sends SIGTERM and waits briefly, then SIGKILL.
func (c *childScheduler) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.log.Close()
}

// runUpstreamKubeScheduler is the binary invoked as kube-scheduler: the
// release's command line, exactly (os.Args[1:] are its flags).
func runUpstreamKubeScheduler() int {
	return cli.Run(app.NewSchedulerCommand())
}

// runKubeScheduler is `kube-lab kube-scheduler`: the upstream scheduler
// app (options → Setup → Run, as its testserver does), configured by a
// KubeSchedulerConfiguration file we write from a few flags.
func runKubeScheduler(args []string) int {
	fs := pflag.NewFlagSet("kube-lab kube-scheduler", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	name := fs.String("scheduler-name", "default-scheduler", "profile schedulerName: pods with this spec.schedulerName are scheduled")
	leaderElect := fs.Bool("leader-elect", false, "take a Lease before scheduling")
	leNamespace := fs.String("leader-elect-resource-namespace", "kube-system", "namespace of the leader-election Lease")
	qps := fs.Float64("qps", 50, "client QPS, burst = 2*QPS; <= 0 means unlimited")
	v := fs.IntP("v", "v", 2, "log verbosity (klog, text on stderr)")
	port := fs.Int("port", 0, "secure port for healthz/metrics on 127.0.0.1; 0 = a free port")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
		return 1
	}
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "kube-scheduler: --kubeconfig is required")
		return 1
	}
	if *port == 0 {
		// Port 0 would mean "do not serve" to kube-scheduler.
		p, err := ports.Free()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
			return 1
		}
		*port = p
	}
	q, burst := float32(*qps), int32(2**qps)
	if *qps <= 0 {
		q, burst = 1e6, 2e6
	}
	// Separate leases for separately named schedulers, so two of them
	// with leader election do not take turns.
	leaseName := "kube-scheduler"
	if *name != "default-scheduler" {
		leaseName = *name
	}
	config := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: %t
  resourceNamespace: %q
  resourceName: %q
profiles:
- schedulerName: %q
`, *kubeconfig, q, burst, *leaderElect, *leNamespace, leaseName, *name)
	cf, err := os.CreateTemp("", "kube-scheduler-config-*.yaml")
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
		return 1
	}
	defer os.Remove(cf.Name())
	if _, err := cf.WriteString(config); err != nil {
		fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
		return 1
	}
	cf.Close()

	if err := schedulerMain(cf.Name(), *kubeconfig, *port, *v); err != nil {
		fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
		return 1
	}
	return 0
}

func schedulerMain(configFile, kubeconfig string, port, v int) error {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	err := fs.Parse([]string{
		"--config=" + configFile,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		// Delegated authn/authz against the lab, as kubeadm configures it,
		// so /metrics works with the admin token.
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		fmt.Sprintf("--v=%d", v),
	})
	if err != nil {
		return err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	fg := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, fg); err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	cc, sched, err := app.Setup(ctx, opts)
	if err != nil {
		return err
	}
	err = app.Run(ctx, cc, sched)
	if ctx.Err() != nil {
		return nil // stopped by a signal: a clean exit
	}
	if err != nil {
		return utilerrors.NewAggregate([]error{err})
	}
	return nil
}
