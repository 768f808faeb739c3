package main

// The fake kubelet's side of node status: extended resources. A kubelet
// derives allocatable from capacity, so a resource a client patches into a
// node's capacity (a device plugin would, and the e2e tests do by hand, e.g.
// example.com/beardsecond) shows up in allocatable too, and one removed from
// capacity leaves allocatable. Nothing else in the status is touched: what
// tests patch themselves stays as they wrote it.

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// isExtendedResource: a fully qualified name outside kubernetes.io, and not
// a requests.* quota name; cpu, memory, pods, ephemeral-storage and
// hugepages-* are the kubelet's own to compute.
func isExtendedResource(name corev1.ResourceName) bool {
	n := string(name)
	return strings.Contains(n, "/") && !strings.Contains(n, "kubernetes.io/") && !strings.HasPrefix(n, "requests.")
}

// syncedAllocatable returns the allocatable a kubelet would report for
// node's capacity, and whether it differs from the current one.
func syncedAllocatable(node *corev1.Node) (corev1.ResourceList, bool) {
	alloc := node.Status.Allocatable.DeepCopy()
	if alloc == nil {
		alloc = corev1.ResourceList{}
	}
	changed := false
	for name, q := range node.Status.Capacity {
		if cur, ok := alloc[name]; isExtendedResource(name) && (!ok || !cur.Equal(q)) {
			alloc[name] = q.DeepCopy()
			changed = true
		}
	}
	for name := range alloc {
		if _, ok := node.Status.Capacity[name]; isExtendedResource(name) && !ok {
			delete(alloc, name)
			changed = true
		}
	}
	return alloc, changed
}

// watchNodeCapacity keeps lab nodes' allocatable extended resources in
// step with their capacity until ctx ends.
func watchNodeCapacity(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	sync := func(obj any) {
		node, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		if _, lab := labNodeIP(node.Name); !lab {
			return
		}
		alloc, changed := syncedAllocatable(node)
		if !changed {
			return
		}
		n := node.DeepCopy()
		n.Status.Allocatable = alloc
		// A conflict means a newer node is on its way through the informer,
		// which calls sync again; no retry loop needed.
		_, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			klog.InfoS("fake kubelet: node allocatable not updated", "node", node.Name, "err", err)
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sync,
		UpdateFunc: func(_, obj any) { sync(obj) },
	}); err != nil {
		return err
	}
	return startAndSync(ctx, factory)
}
