package main

// `kube-lab bind-reference`: the client-go reference of `./dev bench`.
//
// What a Go client, configured as kube-scheduler configures its own
// (protobuf, HTTP/2, an informer with a field selector), costs the API server
// per pod when it makes no decisions at all: for every pending pod of one
// schedulerName, a Binding to the next node in turn, then an events.k8s.io/v1
// `Scheduled` event, as a scheduler sends them. No client rate limit. The
// bench measures the schedulers against it: a scheduler cannot do the same
// two writes per pod faster than this client does them with no work between.
//
// Binds and events have N requests in flight each (--parallelism): the
// event of a pod goes out after its Binding's 201, as kube-scheduler's
// recorder sends it, on a pool of its own so that events never hold binds.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// bindRefCounts are what the reference did, printed at exit for the bench.
type bindRefCounts struct {
	bound, bindFailed, events, eventFailed atomic.Int64
	stopped                                atomic.Int64 // requests cut short by SIGTERM: not failures
}

func runBindReference(args []string) int {
	fs := pflag.NewFlagSet("kube-lab bind-reference", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	name := fs.String("scheduler-name", "default-scheduler", "bind the pending pods with this spec.schedulerName")
	parallelism := fs.Int("parallelism", 16, "Bindings in flight at once (and as many events)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "bind-reference: %v\n", err)
		return 1
	}
	if *kubeconfig == "" || *parallelism < 1 {
		fmt.Fprintln(os.Stderr, "bind-reference: --kubeconfig is required and --parallelism must be >= 1")
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	var n bindRefCounts
	if err := bindReference(ctx, *kubeconfig, *name, *parallelism, &n); err != nil {
		fmt.Fprintf(os.Stderr, "bind-reference: %v\n", err)
		return 1
	}
	fmt.Printf("bind-reference: bound %d failed %d events %d event-failed %d stopped %d\n",
		n.bound.Load(), n.bindFailed.Load(), n.events.Load(), n.eventFailed.Load(), n.stopped.Load())
	return 0
}

// bindRefClient is client-go as kube-scheduler sets it up: protobuf both
// ways, HTTP/2 (client-go's default over TLS), and here no rate limiter.
func bindRefClient(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.UserAgent = "kube-lab-bind-reference"
	return kubernetes.NewForConfig(cfg)
}

func bindReference(ctx context.Context, kubeconfig, schedulerName string, parallelism int, n *bindRefCounts) error {
	cs, err := bindRefClient(kubeconfig)
	if err != nil {
		return err
	}
	nodeList, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	if len(nodeList.Items) == 0 {
		return errors.New("the cluster has no nodes")
	}
	nodes := make([]string, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = nodeList.Items[i].Name
	}

	// Unbounded on purpose: the informer's handler must never block, and a
	// pod is queued once (pods leave the selector when they are bound).
	pending := make(chan *corev1.Pod, 1<<20)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.AndSelectors(
				fields.OneTermEqualSelector("spec.schedulerName", schedulerName),
				fields.OneTermEqualSelector("spec.nodeName", "")).String()
		}))
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				pending <- p
			}
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced) {
		return ctx.Err()
	}
	fmt.Printf("bind-reference: synced nodes=%d pending=%d\n", len(nodes), len(pending))

	host, _ := os.Hostname()
	scheduled := make(chan boundPod, 1<<20)
	var wg sync.WaitGroup
	var next atomic.Uint64
	for range parallelism {
		consume(ctx, &wg, pending, func(p *corev1.Pod) {
			node := nodes[next.Add(1)%uint64(len(nodes))]
			if n.tally(ctx, bindRefBind(ctx, cs, p, node), &n.bound, &n.bindFailed, "binding", p) {
				scheduled <- boundPod{p, node}
			}
		})
		consume(ctx, &wg, scheduled, func(b boundPod) {
			n.tally(ctx, bindRefEvent(ctx, cs, b, host), &n.events, &n.eventFailed, "event for", b.pod)
		})
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// boundPod is a pod with the node its Binding named, for the event's note.
type boundPod struct {
	pod  *corev1.Pod
	node string
}

// tally counts one request's outcome: done, cut short by the stop (the
// bench stops us once the pods are bound; requests may still be in flight),
// or failed (and said so). True when it was done.
func (n *bindRefCounts) tally(ctx context.Context, err error, done, failed *atomic.Int64, what string, p *corev1.Pod) bool {
	switch {
	case err == nil:
		done.Add(1)
		return true
	case ctx.Err() != nil:
		n.stopped.Add(1)
	default:
		failed.Add(1)
		fmt.Fprintf(os.Stderr, "bind-reference: %s %s/%s: %v\n", what, p.Namespace, p.Name, err)
	}
	return false
}

// consume runs do on every item from ch, on a goroutine of its own, until ctx ends.
func consume[T any](ctx context.Context, wg *sync.WaitGroup, ch <-chan T, do func(T)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case x := <-ch:
				do(x)
			}
		}
	}()
}

func bindRefBind(ctx context.Context, cs *kubernetes.Clientset, p *corev1.Pod, node string) error {
	return cs.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
}

func bindRefEvent(ctx context.Context, cs *kubernetes.Clientset, b boundPod, host string) error {
	p, now := b.pod, time.Now()
	_, err := cs.EventsV1().Events(p.Namespace).Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace,
			// As client-go's recorder names them: the object, then the time in hex.
			Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()),
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: "kube-lab-bind-reference",
		ReportingInstance:   "kube-lab-bind-reference-" + strings.ReplaceAll(host, ".", "-"),
		Action:              "Binding",
		Reason:              "Scheduled",
		Type:                corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name,
			UID: p.UID},
		Note: fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, b.node),
	}, metav1.CreateOptions{})
	return err
}
