package main

// `kube-lab judge`: kube-scheduler's answer to "where would this pod go,
// and why not elsewhere?", for the differential judge (test/diff/).
//
// It asks the pinned release's scheduling framework itself, not a log: the
// in-tree registry and the profiles of a KubeSchedulerConfiguration (the
// default one, or --config), defaulted as kube-scheduler defaults them,
// over a snapshot of the cluster read from the API server. For each pending
// pod held by the judge's scheduling gate it runs PreFilter, Filter on every
// node, PreScore, Score and NormalizeScore, and prints, node by node, the
// filter verdict with its plugin, code and reasons, and each plugin's
// normalized score and the weighted total (lab/README.md).
//
// Why a harness rather than kube-scheduler's -v=10 lines: those log only
// the weighted score of the nodes that passed, the first failing filter's
// reasons only as the summary histogram, and nothing when a single node
// fits; and the real scheduler would bind the pods it decides, changing
// what the next pod sees. Here every pod sees the same snapshot, every
// node's status comes out whole, and nothing is written to the cluster.
//
// `kube-lab upstream-profile` (upstream_profile.go) prints the plugins
// these frameworks run at each extension point.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// judgeGate is the scheduling gate the judge holds its pending pods with:
// toy-scheduler leaves a gated pod alone, so both schedulers are asked
// about it on the same cluster, one pod at a time.
const judgeGate = "toysched.dev/judge"

type judgeFlags struct {
	kubeconfig string
	configFile string
	gate       string
	assume     []string // NS/NAME=NODE: count this pending pod as bound there
	only       string   // NS/NAME: judge this pod alone
	out        string
}

func runJudge(args []string) int {
	f := judgeFlags{}
	fs := pflag.NewFlagSet("kube-lab judge", pflag.ContinueOnError)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to read (required)")
	fs.StringVar(&f.configFile, "config", "", "a KubeSchedulerConfiguration file; default: kube-scheduler's default configuration (one profile, default-scheduler)")
	fs.StringVar(&f.gate, "gate", judgeGate, "judge the pending pods held by this scheduling gate")
	fs.StringArrayVar(&f.assume, "assume", nil, "NS/NAME=NODE: count pending pod NS/NAME as bound to NODE, as the scheduler's cache counts a pod it decided (repeatable)")
	fs.StringVar(&f.only, "only", "", "NS/NAME: judge only this pending pod")
	fs.StringVar(&f.out, "out", "-", "write the JSON answer here ('-': stdout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "kube-lab judge: %v\n", err)
		return 1
	}
	if err := judgeMain(f); err != nil {
		fmt.Fprintf(os.Stderr, "kube-lab judge: %v\n", err)
		return 1
	}
	return 0
}

func judgeMain(f judgeFlags) error {
	// The framework logs each profile's plugins at -v=2; the answer is the output.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	profiles, err := loadProfiles(f.configFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 1000, 2000
	client, err := clientset.NewForConfig(rc)
	if err != nil {
		return err
	}
	sel, err := newPodSelection(f)
	if err != nil {
		return err
	}
	answer, err := judgeCluster(ctx, client, rc, profiles, sel)
	if err != nil {
		return err
	}
	return writeJSON(f.out, answer)
}

// loadProfiles reads a KubeSchedulerConfiguration as kube-scheduler reads
// it (decoded, defaulted, validated), or kube-scheduler's default one.
func loadProfiles(file string) ([]config.KubeSchedulerProfile, error) {
	var cfg *config.KubeSchedulerConfiguration
	var err error
	if file == "" {
		cfg, err = latest.Default()
	} else {
		cfg, err = options.LoadConfigFromFile(klog.Background(), file)
	}
	if err != nil {
		return nil, err
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, err
	}
	return cfg.Profiles, nil
}

// newFrameworks builds one framework per profile as scheduler.New does:
// the in-tree registry, the informer factory, the DRA and CSI managers,
// and the snapshot as the plugins' view of nodes and pods.
func newFrameworks(ctx context.Context, client clientset.Interface, rc *restclient.Config, factory informers.SharedInformerFactory,
	profiles []config.KubeSchedulerProfile, snapshot fwk.SharedLister) ([]framework.Framework, error) {
	logger := klog.FromContext(ctx)
	metrics.Register() // the framework counts its plugins' calls, as in kube-scheduler
	var draManager fwk.SharedDRAManager
	if feature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
		opts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   feature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: feature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            factory.Resource().V1().ResourceSlices(),
			KubeClient:               client,
		}
		if opts.EnableDeviceTaintRules {
			opts.TaintInformer = factory.Resource().V1beta2().DeviceTaintRules()
			opts.ClassInformer = factory.Resource().V1().DeviceClasses()
		}
		tracker, err := resourceslicetracker.StartTracker(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("resource slice tracker: %w", err)
		}
		draManager = dynamicresources.NewDRAManager(ctx, claims, tracker, factory)
	}
	csiManager := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())
	registry := frameworkplugins.NewInTreeRegistry()
	var out []framework.Framework
	for i := range profiles {
		fw, err := frameworkruntime.NewFramework(ctx, registry, &profiles[i],
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithKubeConfig(rc),
			frameworkruntime.WithInformerFactory(factory),
			frameworkruntime.WithSharedDRAManager(draManager),
			frameworkruntime.WithSnapshotSharedLister(snapshot),
			frameworkruntime.WithSharedCSIManager(csiManager),
		)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", profiles[i].SchedulerName, err)
		}
		out = append(out, fw)
	}
	return out, nil
}

// judgeCluster reads the cluster once and judges every gated pending pod of
// a profile: bound pods make the snapshot, as in kube-scheduler's cache
// (pending pods count nowhere; the judge nominates none).
func judgeCluster(ctx context.Context, client clientset.Interface, rc *restclient.Config,
	profiles []config.KubeSchedulerProfile, sel podSelection) (*judgeAnswer, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nodeNames := map[string]bool{}
	var nodeList []*v1.Node
	for i := range nodes.Items {
		nodeList = append(nodeList, &nodes.Items[i])
		nodeNames[nodes.Items[i].Name] = true
	}
	var bound, pending []*v1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
		case p.Spec.NodeName != "":
			if nodeNames[p.Spec.NodeName] { // a pod on a node gone counts nowhere
				bound = append(bound, p)
			}
		case sel.assumed[p.Namespace+"/"+p.Name] != "":
			assumed := p.DeepCopy()
			assumed.Spec.NodeName = sel.assumed[p.Namespace+"/"+p.Name]
			bound = append(bound, assumed)
		case hasGate(p, sel.gate) && (sel.only == "" || sel.only == p.Namespace+"/"+p.Name):
			pending = append(pending, p)
		}
	}
	snapshot := internalcache.NewSnapshot(bound, nodeList)
	factory := informers.NewSharedInformerFactory(client, 0)
	fws, err := newFrameworks(ctx, client, rc, factory, profiles, snapshot)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	byName := map[string]framework.Framework{}
	for i, fw := range fws {
		byName[profiles[i].SchedulerName] = fw
	}
	answer := &judgeAnswer{Nodes: len(nodeList), BoundPods: len(bound), Pods: []podAnswer{}}
	for _, p := range pending {
		fw, ok := byName[p.Spec.SchedulerName]
		if !ok {
			continue // another scheduler's pod
		}
		a, err := judgePod(ctx, fw, snapshot, p)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		answer.Pods = append(answer.Pods, a)
	}
	return answer, nil
}

// podSelection says which pending pods are judged, and which count as
// decided (the judge's chained mode: each pod sees the ones before it
// where toy-scheduler put them).
type podSelection struct {
	gate    string
	only    string
	assumed map[string]string // NS/NAME -> node
}

func newPodSelection(f judgeFlags) (podSelection, error) {
	sel := podSelection{gate: f.gate, only: f.only, assumed: map[string]string{}}
	for _, a := range f.assume {
		pod, node, ok := strings.Cut(a, "=")
		if !ok || !strings.Contains(pod, "/") || node == "" {
			return sel, fmt.Errorf("--assume %q: want NAMESPACE/NAME=NODE", a)
		}
		sel.assumed[pod] = node
	}
	return sel, nil
}

func hasGate(p *v1.Pod, gate string) bool {
	for _, g := range p.Spec.SchedulingGates {
		if g.Name == gate {
			return true
		}
	}
	return false
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
