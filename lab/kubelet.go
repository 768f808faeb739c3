package main

// The fake kubelet: no containers run, but pods bound to lab nodes get the
// status a kubelet would report (Running, Ready, IPs, container statuses),
// and pods being deleted are finalized (grace period 0, UID precondition)
// as a kubelet does after stopping the containers: at once, or once a
// preStop sleep hook has run. That is
// what makes Deployments roll out and `kubectl delete` finish. Node status:
// see kubelet_node.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

const kubeletWorkers = 4

type fakeKubelet struct {
	client kubernetes.Interface
	pods   corelisters.PodLister
	queue  workqueue.TypedRateLimitingInterface[string]
	nextIP atomic.Uint32
}

func startFakeKubelet(ctx context.Context, client kubernetes.Interface) error {
	// Only bound pods, like a kubelet's own watch (which filters on its node).
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	podInformer := factory.Core().V1().Pods()
	k := &fakeKubelet{
		client: client,
		pods:   podInformer.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "fake-kubelet"}),
	}
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !k.needsWork(pod) {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
			k.queue.Add(key)
		}
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	if err := startAndSync(ctx, factory); err != nil {
		return err
	}
	k.resumeIPs()
	if err := watchNodeCapacity(ctx, client); err != nil {
		return err
	}
	for w := 0; w < kubeletWorkers; w++ {
		go func() {
			for k.processNext(ctx) {
			}
		}()
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	return nil
}

// startAndSync starts factory's informers and waits until their caches
// hold the whole list.
func startAndSync(ctx context.Context, factory informers.SharedInformerFactory) error {
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	return nil
}

func (k *fakeKubelet) needsWork(pod *corev1.Pod) bool {
	if _, ok := labNodeIP(pod.Spec.NodeName); !ok {
		return false
	}
	if pod.DeletionTimestamp != nil {
		return true
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	case corev1.PodRunning:
		return pod.Status.PodIP == "" // someone reset it; report again
	}
	return true
}

func (k *fakeKubelet) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	if err := k.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			klog.V(2).InfoS("fake kubelet: retrying", "pod", key, "err", err)
			k.queue.AddRateLimited(key)
		}
		return true
	}
	k.queue.Forget(key)
	return true
}

func (k *fakeKubelet) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if !k.needsWork(pod) {
		return nil
	}
	hostIP, _ := labNodeIP(pod.Spec.NodeName)

	if pod.DeletionTimestamp != nil {
		// A preStop sleep hook runs first, as a kubelet runs it: the pod
		// stays, terminating, until it ends (at most the grace period).
		if wait := preStopWait(pod, time.Now()); wait > 0 {
			k.queue.AddAfter(key, wait)
			return nil
		}
		// The containers are "stopped": finalize the deletion now. The UID
		// precondition guards against deleting a new pod of the same name.
		zero := int64(0)
		uid := pod.UID
		err := k.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}

	p := pod.DeepCopy()
	p.Status = k.runningStatus(p, hostIP)
	_, err = k.client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err // a conflict is retried with the informer's newer copy
}

// preStopWait: how long the longest preStop sleep hook of the pod's
// containers still runs at `now`. Deletion started at DeletionTimestamp
// minus the grace period; the hook runs from then for its seconds, cut at
// the grace period as a kubelet cuts it. 0: no hook, or it has ended.
func preStopWait(pod *corev1.Pod, now time.Time) time.Duration {
	var sleep int64
	for _, c := range pod.Spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			sleep = max(sleep, c.Lifecycle.PreStop.Sleep.Seconds)
		}
	}
	if sleep <= 0 || pod.DeletionTimestamp == nil {
		return 0
	}
	grace := int64(0)
	if pod.DeletionGracePeriodSeconds != nil {
		grace = *pod.DeletionGracePeriodSeconds
	}
	start := pod.DeletionTimestamp.Add(-time.Duration(grace) * time.Second)
	end := start.Add(time.Duration(min(sleep, grace)) * time.Second)
	if d := end.Sub(now); d > 0 {
		return d
	}
	return 0
}

// resumeIPs continues the pod IP counter after the highest address in use,
// so pods from before a lab restart keep unique IPs.
func (k *fakeKubelet) resumeIPs() {
	pods, _ := k.pods.List(labels.Everything())
	var high uint32
	for _, p := range pods {
		ip := net.ParseIP(p.Status.PodIP).To4()
		if ip != nil && ip[0] == 198 && ip[1] == 19 {
			high = max(high, uint32(ip[2])<<8|uint32(ip[3]))
		}
	}
	k.nextIP.Store(high)
}

// podIP hands out addresses from 198.19.0.0/16, skipping .0 and .255.
func (k *fakeKubelet) podIP() string {
	for {
		n := k.nextIP.Add(1) % 65536
		if lo := n % 256; lo != 0 && lo != 255 {
			return fmt.Sprintf("198.19.%d.%d", n/256, lo)
		}
	}
}

func (k *fakeKubelet) runningStatus(pod *corev1.Pod, hostIP string) corev1.PodStatus {
	now := metav1.Now()
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		podIP = k.podIP()
	}
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	st := corev1.PodStatus{
		Phase:    corev1.PodRunning,
		HostIP:   hostIP,
		HostIPs:  []corev1.HostIP{{IP: hostIP}},
		PodIP:    podIP,
		PodIPs:   []corev1.PodIP{{IP: podIP}},
		QOSClass: pod.Status.QOSClass,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers), cond(corev1.PodInitialized),
			cond(corev1.ContainersReady), cond(corev1.PodReady), cond(corev1.PodScheduled),
		},
	}
	if pod.Status.StartTime != nil {
		st.StartTime = pod.Status.StartTime
	} else {
		st.StartTime = &now
	}
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: containerID(),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	started := true
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: containerID(),
			Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

func containerID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "fake://" + hex.EncodeToString(b)
}
