package main

// Fake nodes: Node objects created with their status in one Create (as
// scheduler_perf does), Ready=True, with capacity, an InternalIP, the
// usual labels, zone labels (--zones) and images (--node-images). No kubelet
// heartbeats them, no node-lifecycle controller runs and nothing in the lab
// writes node status after the Create, so they stay Ready and keep their
// images.

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func nodeName(i int) string { return fmt.Sprintf("lab-node-%d", i) }

// nodeIP is node i's InternalIP in 198.18.0.0/15 (benchmark range, RFC 2544).
func nodeIP(i int) string { return fmt.Sprintf("198.18.%d.%d", i/256, i%256) }

var labNodeRE = regexp.MustCompile(`^lab-node-([1-9][0-9]*)$`)

// labNodeIP returns the InternalIP of a lab node by name; ok=false for
// nodes the lab does not own (tests may create their own).
func labNodeIP(name string) (string, bool) {
	m := labNodeRE.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	i, err := strconv.Atoi(m[1])
	if err != nil || i >= 2*65536 { // 198.18.0.0/15 holds 131072 addresses
		return "", false
	}
	return net.ParseIP(nodeIP(i)).String(), true
}

func createNodes(ctx context.Context, client kubernetes.Interface, f *labFlags) error {
	if f.nodes == 0 {
		return nil
	}
	res, err := nodeResources(f)
	if err != nil {
		return err
	}

	// Skip nodes that survive from an earlier run on the same DIR.
	existing := map[string]bool{}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range list.Items {
		existing[n.Name] = true
	}

	todo := make(chan int)
	var firstErr error
	var errOnce sync.Once
	var created atomic.Int64
	var wg sync.WaitGroup
	workers := min(32, f.nodes)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := range todo {
				if err := createNode(ctx, client, i, res, f); err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				created.Add(1)
			}
		})
	}
	for i := 1; i <= f.nodes; i++ {
		if existing[nodeName(i)] {
			continue
		}
		select {
		case todo <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(todo)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}

// nodeResources is each node's capacity (= allocatable). pods must be set,
// else NodeResourcesFit rejects every pod.
func nodeResources(f *labFlags) (corev1.ResourceList, error) {
	res := corev1.ResourceList{}
	for _, q := range []struct {
		flag, val string
		name      corev1.ResourceName
	}{
		{"--node-cpu", f.nodeCPU, corev1.ResourceCPU},
		{"--node-memory", f.nodeMemory, corev1.ResourceMemory},
		{"--node-pods", f.nodePods, corev1.ResourcePods},
		{"--node-ephemeral-storage", f.nodeEphemeral, corev1.ResourceEphemeralStorage},
	} {
		v, err := resource.ParseQuantity(q.val)
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a quantity", q.flag, q.val)
		}
		res[q.name] = v
	}
	return res, nil
}

// nodeLabels are node i's labels; with zones > 0 the nodes go round-robin
// over zone-0..zone-(zones-1), so consecutive nodes are in different zones.
func nodeLabels(i, zones int) map[string]string {
	l := map[string]string{
		corev1.LabelHostname:   nodeName(i),
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	if zones > 0 {
		l[corev1.LabelTopologyZone] = fmt.Sprintf("zone-%d", (i-1)%zones)
		l[corev1.LabelTopologyRegion] = "lab"
	}
	return l
}

func createNode(ctx context.Context, client kubernetes.Interface, i int, res corev1.ResourceList, f *labFlags) error {
	name := nodeName(i)
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels(i, f.zones)},
		Status: corev1.NodeStatus{
			Images:      f.nodeImages[i],
			Capacity:    res.DeepCopy(),
			Allocatable: res.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "kube-lab fake node",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux", Architecture: "amd64",
				KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "fake://kube-lab",
			},
		},
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		_, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Duration(100*(attempt+1)) * time.Millisecond)
	}
	return fmt.Errorf("create %s: %w", name, err)
}
