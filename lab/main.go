// Command kube-lab runs a real Kubernetes control plane in one process:
// embedded etcd, kube-apiserver (TLS, own CA, static admin token, RBAC),
// fake Ready nodes, a fake kubelet, optionally the deployment/replicaset/GC/
// namespace controllers and the real kube-scheduler (as a child process).
//
// The same binary is also `kubectl` (when invoked under that name, or as
// `kube-lab kubectl ...`) and `kube-lab kube-scheduler ...`, so that every
// Kubernetes piece the project uses comes from one pinned release; and
// `kube-lab toxiproxy ...`, the fault-injecting proxy of the fault tests;
// and `kube-lab judge ...`, kube-scheduler's framework asked about pending
// pods, for the differential judge (judge.go).
//
// The command line is a contract with the project's scripts and tests; see
// lab/README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

func main() {
	switch filepath.Base(os.Args[0]) {
	case "kubectl":
		runKubectl(os.Args)
		return
	case "kube-scheduler":
		os.Exit(runUpstreamKubeScheduler())
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "kubectl":
			runKubectl(os.Args[1:])
			return
		case "kube-scheduler":
			os.Exit(runKubeScheduler(os.Args[2:]))
		case "kube-scheduler-flags":
			os.Exit(printKubeSchedulerFlags())
		case "toxiproxy":
			os.Exit(runToxiproxy(os.Args[2:]))
		case "bind-reference":
			os.Exit(runBindReference(os.Args[2:]))
		case "upstream-profile":
			os.Exit(runUpstreamProfile(os.Args[2:]))
		case "judge":
			os.Exit(runJudge(os.Args[2:]))
		}
	}
	os.Exit(runLab(os.Args[1:]))
}

// labFlags are the lab's own command-line options.
type labFlags struct {
	dir                string
	port               int
	nodes              int
	zones              int
	nodeImagesSpec     string
	nodeImages         map[int][]corev1.ContainerImage // parsed nodeImagesSpec, by node number
	nodeCPU            string
	nodeMemory         string
	nodePods           string
	nodeEphemeral      string
	noKubelet          bool
	controllers        bool
	kubeScheduler      bool
	kubeSchedulerQPS   float64
	kubeSchedulerV     int
	compactionInterval time.Duration
	watchCache         bool
	apiserverV         int
	maxInflight        int
	auditBindings      bool
	storage            bool   // storage.go
	csiDriver          string // storage.go
	csiAttachLimit     int    // storage.go
}

func parseLabFlags(args []string) (*labFlags, error) {
	f := &labFlags{}
	fs := pflag.NewFlagSet("kube-lab", pflag.ContinueOnError)
	fs.StringVar(&f.dir, "dir", "", "lab directory (etcd data, PKI, kubeconfigs, logs); default: a fresh temp dir")
	fs.IntVar(&f.port, "port", 0, "apiserver secure port; default: the port saved in DIR/port, else a free port")
	fs.IntVar(&f.nodes, "nodes", 3, "number of fake nodes lab-node-1..N")
	fs.IntVar(&f.zones, "zones", 0, "spread the nodes over N zones: lab-node-i gets topology.kubernetes.io/zone=zone-<(i-1) mod N> "+
		"and topology.kubernetes.io/region=lab; 0 = no zone or region label; nodes kept from an earlier run on DIR keep their labels")
	fs.StringVar(&f.nodeImagesSpec, "node-images", "", nodeImagesHelp)
	fs.StringVar(&f.nodeCPU, "node-cpu", "4", "cpu capacity/allocatable of each node")
	fs.StringVar(&f.nodeMemory, "node-memory", "32Gi", "memory capacity/allocatable of each node")
	fs.StringVar(&f.nodePods, "node-pods", "110", "pods capacity/allocatable of each node")
	fs.StringVar(&f.nodeEphemeral, "node-ephemeral-storage", "100Gi", "ephemeral-storage capacity/allocatable of each node")
	fs.BoolVar(&f.noKubelet, "no-kubelet", false, "do not run the fake kubelet (bound pods stay Pending)")
	fs.BoolVar(&f.controllers, "controllers", false, "run the deployment, replicaset, replicationcontroller, statefulset, garbage-collector, namespace, serviceaccount, root-ca-cert-publisher, disruption, "+
		"persistentvolume-binder, ephemeral-volume, pvc-protection and pv-protection controllers")
	fs.BoolVar(&f.kubeScheduler, "kube-scheduler", false, "run the real kube-scheduler (default-scheduler) as a child process")
	fs.Float64Var(&f.kubeSchedulerQPS, "kube-scheduler-qps", 50, "kube-scheduler client QPS (burst = 2*QPS; <= 0 means unlimited)")
	fs.IntVar(&f.kubeSchedulerV, "kube-scheduler-v", 2, "kube-scheduler log verbosity")
	fs.DurationVar(&f.compactionInterval, "etcd-compaction-interval", 5*time.Minute, "apiserver's etcd compaction interval (short values provoke 410 Gone)")
	fs.BoolVar(&f.watchCache, "watch-cache", true, "apiserver watch cache; false sends watches to etcd, so a compacted resourceVersion gives 410 Gone on watch too")
	fs.IntVar(&f.maxInflight, "max-requests-inflight", 0, "limit the apiserver to N requests at once (priority and fairness off, so it applies to the admin too): beyond it, 429 with Retry-After, for tests of client retries; 0 = the apiserver's defaults")
	fs.BoolVar(&f.auditBindings, "audit-bindings", false, "log each pods/binding request when the apiserver receives it and when it answers (its audit log, Metadata level) to DIR/"+auditBindingsLog+": which of two racing schedulers reached the server first")
	storageFlags(fs, f)
	fs.IntVar(&f.apiserverV, "apiserver-v", 1, "apiserver (and in-process controllers) log verbosity, to DIR/apiserver.log")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.nodes < 0 {
		return nil, fmt.Errorf("--nodes must be >= 0")
	}
	if err := checkStorageFlags(f); err != nil {
		return nil, err
	}
	if f.zones < 0 {
		return nil, fmt.Errorf("--zones must be >= 0 (0 = no zone labels), got %d", f.zones)
	}
	var err error
	if f.nodeImages, err = parseNodeImages(f.nodeImagesSpec, f.nodes); err != nil {
		return nil, err
	}
	if f.port < 0 || f.port > 65535 {
		return nil, fmt.Errorf("--port out of range")
	}
	if _, err := nodeResources(f); err != nil {
		return nil, err
	}
	return f, nil
}

// stderr is the terminal's stderr, for the lab's own one-line messages.
// os.Stderr itself is pointed at DIR/apiserver.log (see redirectKlog), so
// that what embedded components print there lands in the log.
var stderr = os.Stderr

// stopping is set once a signal asked the lab to stop.
var stopping atomic.Bool

// fail prints one line to stderr and returns the exit code for startup errors.
func fail(format string, a ...any) int {
	fmt.Fprintf(stderr, "kube-lab: "+format+"\n", a...)
	return 1
}

func runLab(args []string) int {
	f, err := parseLabFlags(args)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return fail("%v", err)
	}

	// Our own signal handling: the apiserver's SetupSignalContext may only be
	// called once per process and would exit on its own terms. A second
	// signal kills us at once.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		stopping.Store(true)
		stop() // restore default handling: the next signal is fatal
	}()

	if f.dir == "" {
		d, err := os.MkdirTemp("", "kube-lab-")
		if err != nil {
			return fail("%v", err)
		}
		f.dir = d
		fmt.Printf("dir %s\n", d)
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return fail("%v", err)
	}
	defer lock.release()
	readyFile := filepath.Join(dir, "ready")
	_ = os.Remove(readyFile) // stale from a crashed run

	if err := redirectKlog(filepath.Join(dir, "apiserver.log")); err != nil {
		return fail("%v", err)
	}
	// klog.Fatal (e.g. a post-start hook failing because we are stopping
	// during startup) would exit the whole process: while stopping, end
	// just that goroutine; otherwise exit 1 with one line.
	klog.OsExit = func(int) {
		if stopping.Load() {
			runtime.Goexit()
		}
		_ = os.Remove(readyFile)
		fmt.Fprintf(stderr, "kube-lab: fatal error in an embedded component, see %s\n", filepath.Join(dir, "apiserver.log"))
		os.Exit(1)
	}

	l := &lab{flags: f, dir: dir}
	code := l.run(ctx, readyFile)
	_ = os.Remove(readyFile)
	klog.Flush()
	return code
}

// lab holds the running pieces so shutdown can stop them in order.
type lab struct {
	flags *labFlags
	dir   string
	pki   *pki
	port  int
}

func (l *lab) run(ctx context.Context, readyFile string) int {
	start := time.Now()

	var err error
	if l.pki, err = ensurePKI(l.dir); err != nil {
		return fail("pki: %v", err)
	}
	if l.port, err = choosePort(l.dir, l.flags.port); err != nil {
		return fail("%v", err)
	}
	kubeconfig := filepath.Join(l.dir, "kubeconfig")
	if err := writeKubeconfigs(l.dir, l.port, l.pki); err != nil {
		return fail("kubeconfig: %v", err)
	}

	etcd, err := startEtcd(l.dir)
	if err != nil {
		return fail("etcd: %v", err)
	}
	defer etcd.stop()

	// The apiserver gets its own cancelable context so we can stop it before
	// etcd on shutdown.
	apiCtx, apiCancel := context.WithCancel(context.Background())
	api, err := startAPIServer(apiCtx, l, etcd.clientURL)
	if err != nil {
		apiCancel()
		return fail("apiserver: %v", err)
	}
	defer func() {
		apiCancel()
		select {
		case <-api.done:
		case <-time.After(8 * time.Second):
			klog.Warning("apiserver did not stop within 8s")
		}
	}()

	// Everything below runs under compCtx; cancelled first on shutdown.
	compCtx, compCancel := context.WithCancel(ctx)
	defer compCancel()
	go func() {
		// An apiserver that exits on its own (e.g. port in use) ends the lab.
		select {
		case <-api.done:
			if api.err != nil {
				fmt.Fprintf(stderr, "kube-lab: apiserver exited: %v\n", api.err)
			}
			compCancel()
		case <-compCtx.Done():
		}
	}()

	return l.serve(ctx, compCtx, api, kubeconfig, readyFile, start)
}

// serve starts what runs against the apiserver (the flags say which),
// writes the ready file and waits for the end: a signal (exit 0) or the
// apiserver's death (exit 1). What it started stops before it returns;
// ctx is the lab's, compCtx the components'.
func (l *lab) serve(ctx, compCtx context.Context, api *apiServer, kubeconfig, readyFile string, start time.Time) int {
	f := l.flags
	// Startup steps after the apiserver: a failure prints one line and
	// exits 1, unless we are stopping (signal) or the apiserver itself died
	// (its goroutine in run already said why).
	failed := func(what string, err error) int {
		if ctx.Err() != nil {
			return 0
		}
		select {
		case <-api.done:
			return 1
		default:
		}
		return fail("%s: %v", what, err)
	}
	cfg, err := adminRESTConfig(kubeconfig)
	if err != nil {
		return fail("%v", err)
	}
	if err := waitAPIServerReady(compCtx, cfg, 3*time.Minute); err != nil {
		return failed("apiserver not ready (see "+filepath.Join(l.dir, "apiserver.log")+")", err)
	}
	client, err := newClient(cfg, "kube-lab")
	if err != nil {
		return fail("%v", err)
	}
	if err := ensureDefaults(compCtx, client); err != nil {
		return failed("default namespace", err)
	}
	if err := createNodes(compCtx, client, f); err != nil {
		return failed("nodes", err)
	}
	if !f.noKubelet {
		if err := startFakeKubelet(compCtx, client); err != nil {
			return failed("fake kubelet", err)
		}
	}
	if f.controllers {
		rootCA, err := os.ReadFile(l.pki.caCert)
		if err != nil {
			return fail("%v", err)
		}
		if err := startControllers(compCtx, cfg, rootCA); err != nil {
			return failed("controllers", err)
		}
	}
	if err := startStorage(compCtx, cfg, client, f); err != nil {
		return failed("storage", err)
	}
	if f.kubeScheduler {
		sched, err := startChildScheduler(compCtx, l.dir, kubeconfig, f.kubeSchedulerQPS, f.kubeSchedulerV)
		if err != nil {
			return failed("kube-scheduler", err)
		}
		defer sched.stop()
	}

	// Written aside and renamed into place: a launcher that sees DIR/ready
	// sees all of it, never an empty or half-written file.
	if err := os.WriteFile(readyFile+".tmp", []byte(kubeconfig+"\n"), 0o644); err != nil {
		return fail("%v", err)
	}
	if err := os.Rename(readyFile+".tmp", readyFile); err != nil {
		return fail("%v", err)
	}
	klog.InfoS("lab ready", "kubeconfig", kubeconfig, "elapsed", time.Since(start))
	fmt.Printf("ready kubeconfig=%s\n", kubeconfig)

	<-compCtx.Done()
	// Shutdown order (deferred here, then in run): readiness marker, child
	// scheduler, in-process components (compCtx), apiserver, etcd, lock.
	_ = os.Remove(readyFile)
	if ctx.Err() == nil {
		return 1 // the apiserver died, not a signal
	}
	return 0
}

// dirLock is an exclusive flock on DIR/lock, held for the lab's lifetime.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "?"
		}
		return nil, fmt.Errorf("%s is in use by another lab (pid %s)", dir, pid)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &dirLock{f: f}, nil
}

func (d *dirLock) release() {
	_ = d.f.Truncate(0)
	_ = syscall.Flock(int(d.f.Fd()), syscall.LOCK_UN)
	d.f.Close()
}
