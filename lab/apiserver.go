package main

// kube-apiserver in-process, configured through its own flag set (the same
// flags a real kube-apiserver takes, so the configuration reads like a
// manifest), then Complete → Validate → app.Run — the path the upstream
// command takes, minus its signal handler (one per process; we own it).

import (
	"context"
	goflag "flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// apiServer is a running in-process kube-apiserver.
type apiServer struct {
	done chan struct{} // closed when app.Run returns
	err  error         // valid after done
}

func (l *lab) apiserverArgs(etcdURL string) []string {
	p := l.pki
	var limits []string
	if n := l.flags.maxInflight; n > 0 {
		// With priority and fairness on, system:masters is exempt from every
		// limit; off, the plain max-inflight filter answers 429 to anyone.
		limits = []string{"--enable-priority-and-fairness=false",
			fmt.Sprintf("--max-requests-inflight=%d", n), fmt.Sprintf("--max-mutating-requests-inflight=%d", n)}
	}
	if l.flags.auditBindings {
		limits = append(limits, "--audit-policy-file="+l.dir+"/"+auditBindingsPolicy, "--audit-log-path="+l.dir+"/"+auditBindingsLog)
	}
	return append(limits, []string{
		"--etcd-servers=" + etcdURL,
		fmt.Sprintf("--etcd-compaction-interval=%s", l.flags.compactionInterval),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", l.port),
		"--advertise-address=127.0.0.1", // else taken from the default route, or start fails
		"--cert-dir=" + l.dir + "/pki",
		"--tls-cert-file=" + p.servingCert,
		"--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.clientCACert,
		"--token-auth-file=" + p.tokenCSV,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saKey,
		"--service-account-signing-key-file=" + p.saKey,
		"--authorization-mode=RBAC",
		// No serviceaccount admission (there is no token controller) and no
		// not-ready taint on new Nodes (no kubelet will ever clear it).
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--service-cluster-ip-range=10.0.0.0/24",
		// The lease reconciler would publish 127.0.0.1 as the kubernetes
		// service endpoint, which Endpoints validation rejects.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--watch-cache=%t", l.flags.watchCache),
		fmt.Sprintf("--v=%d", l.flags.apiserverV),
	}...)
}

// --audit-bindings: the apiserver's audit log, of bindings only. The log
// backend writes each event before the request goes on ("blocking" mode),
// so the log's order is the server's. Metadata level: who (user agent),
// what (pod), when received, when answered, and the answer's code.
const (
	auditBindingsLog    = "audit-bindings.log"
	auditBindingsPolicy = "audit-bindings-policy.yaml"
)

const auditBindingsRules = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: None
`

func startAPIServer(ctx context.Context, l *lab, etcdURL string) (*apiServer, error) {
	if l.flags.auditBindings {
		if err := os.WriteFile(l.dir+"/"+auditBindingsPolicy, []byte(auditBindingsRules), 0o644); err != nil {
			return nil, err
		}
	}
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(l.apiserverArgs(etcdURL)); err != nil {
		return nil, err
	}
	reg := s.GenericServerRunOptions.ComponentGlobalsRegistry
	if err := reg.Set(); err != nil {
		return nil, err
	}
	// The apiserver's loopback clients would print self-issued deprecation
	// warnings to stderr; so would ours. Keep stderr for the lab's messages.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	logsapi.ReapplyHandling = logsapi.ReapplyHandlingIgnoreUnchanged
	fg := reg.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	// The text logger writes to the streams given here (default: stderr).
	logOpts := &logsapi.LoggingOptions{ErrorStream: klogFile, InfoStream: klogFile}
	if err := logsapi.ValidateAndApplyWithOptions(s.Logs, logOpts, fg); err != nil {
		return nil, err
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return nil, err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	if mfg, ok := fg.(featuregate.MutableFeatureGate); ok {
		mfg.AddMetrics()
	}
	a := &apiServer{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.err = app.Run(ctx, completed)
		if ctx.Err() != nil {
			a.err = nil // asked to stop
		}
	}()
	return a, nil
}

// klogFile is DIR/apiserver.log once redirectKlog ran.
var klogFile = os.Stderr

// redirectKlog sends klog (the apiserver's and in-process controllers' logs)
// to a file, so the terminal only shows the lab's own short lines.
func redirectKlog(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "one_output": "true"} {
		if err := fs.Set(k, v); err != nil {
			return err
		}
	}
	klog.SetOutput(f)
	klogFile = f
	// klog writes fatal stack dumps to os.Stderr directly, and some
	// components print there too; the lab's own lines use the saved stderr.
	os.Stderr = f
	return nil
}

func adminRESTConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// In-process components create pods in bulk; don't throttle them on
	// the client side (the admin identity is exempt from APF anyway).
	cfg.QPS = 1000
	cfg.Burst = 2000
	return cfg, nil
}

func newClient(cfg *rest.Config, userAgent string) (*kubernetes.Clientset, error) {
	c := rest.CopyConfig(cfg)
	c.UserAgent = userAgent
	return kubernetes.NewForConfig(c)
}

// waitAPIServerReady polls /readyz with the admin credentials (so TLS and
// token auth are exercised exactly as clients will use them).
func waitAPIServerReady(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	client, err := newClient(cfg, "kube-lab-readyz")
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var code int
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Raw()
		if err == nil && code == http.StatusOK {
			return true, nil
		}
		last = strings.TrimSpace(string(body))
		if err != nil {
			last = err.Error()
		}
		return false, nil
	})
	if err != nil && last != "" {
		return fmt.Errorf("%w; last /readyz: %s", err, lastLines(last, 3))
	}
	return err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// ensureDefaults waits for the "default" namespace (a post-start hook makes
// it) and creates its "default" ServiceAccount, which there is no
// controller for unless --controllers: `kubectl create token default` and
// in-cluster tests need it.
func ensureDefaults(ctx context.Context, client kubernetes.Interface) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: metav1.NamespaceDefault}}
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Create(ctx, sa, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			klog.InfoS("creating default serviceaccount", "err", err)
			return false, nil
		}
		return true, nil
	})
}
