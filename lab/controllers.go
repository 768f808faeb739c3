package main

// The controllers a Deployment needs, constructed directly (as Kubernetes'
// integration tests do) instead of through kube-controller-manager: no kcm
// flag sets (their feature-gate registration clashes with the apiserver's
// in one process), no ports, no leader election, and only what we use:
//
//   deployment → replicaset → pods; replicationcontroller → pods; garbage
//   collector (deleting a Deployment deletes its ReplicaSets and pods);
//   namespace (deleted namespaces are emptied and go away); serviceaccount
//   and root-CA publisher (every namespace gets a "default" ServiceAccount
//   and the kube-root-ca.crt ConfigMap, as in a real cluster: the e2e
//   framework waits for both in each test namespace); disruption (a
//   PodDisruptionBudget's status, which preemption and eviction read);
//   and the storage ones, volumes.go: persistentvolume-binder,
//   ephemeral-volume and statefulset.
//
// Notably absent: node-lifecycle and taint-eviction, which would mark the
// fake nodes NotReady because no kubelet heartbeats them.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cacheddiscovery "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	"k8s.io/kubernetes/pkg/controller/namespace"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/replication"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// Worker counts: kube-controller-manager's defaults.
const (
	deploymentWorkers = 5
	replicaSetWorkers = 5
	gcWorkers         = 20
	namespaceWorkers  = 10
	saWorkers         = 1
	rcWorkers         = 5
	rootCAWorkers     = 1
)

// clients gives each controller its own client and user agent (visible in
// apiserver logs and managedFields); all share cfg's raised QPS/burst. The
// first error is kept in err.
type clients struct {
	cfg *rest.Config
	err error
}

func (cl *clients) forName(name string) (*kubernetes.Clientset, *rest.Config) {
	c := rest.CopyConfig(cl.cfg)
	c.UserAgent = "kube-lab/" + name
	cs, err := kubernetes.NewForConfig(c)
	if err != nil && cl.err == nil {
		cl.err = err
	}
	return cs, c
}

// startControllers runs them all; rootCA is the cluster CA's PEM, which the
// root-CA publisher puts in every namespace.
func startControllers(ctx context.Context, cfg *rest.Config, rootCA []byte) error {
	cl := clients{cfg: cfg}
	sharedClient, _ := cl.forName("shared-informers")
	dcClient, _ := cl.forName("deployment-controller")
	rsClient, _ := cl.forName("replicaset-controller")
	saClient, _ := cl.forName("serviceaccount-controller")
	nsClient, nsCfg := cl.forName("namespace-controller")
	rcClient, _ := cl.forName("replication-controller")
	caClient, _ := cl.forName("root-ca-cert-publisher")
	pdbClient, pdbCfg := cl.forName("disruption-controller")
	if cl.err != nil {
		return cl.err
	}
	nsMeta, err := metadata.NewForConfig(nsCfg)
	if err != nil {
		return err
	}

	factory := informers.NewSharedInformerFactory(sharedClient, 0)
	dc, err := deployment.NewDeploymentController(ctx,
		factory.Apps().V1().Deployments(), factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), dcClient)
	if err != nil {
		return fmt.Errorf("deployment controller: %w", err)
	}
	rsc := replicaset.NewReplicaSetController(ctx,
		factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), rsClient, replicaset.BurstReplicas)
	sac, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx),
		factory.Core().V1().ServiceAccounts(), factory.Core().V1().Namespaces(), saClient,
		serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return fmt.Errorf("serviceaccount controller: %w", err)
	}
	nsc := namespace.NewNamespaceController(ctx, nsClient, nsMeta,
		nsClient.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), 5*time.Minute, corev1.FinalizerKubernetes)

	rcm := replication.NewReplicationManager(ctx,
		factory.Core().V1().Pods(), factory.Core().V1().ReplicationControllers(), rcClient, replication.BurstReplicas)
	pub, err := rootcacertpublisher.NewPublisher(
		factory.Core().V1().ConfigMaps(), factory.Core().V1().Namespaces(), caClient, rootCA)
	if err != nil {
		return fmt.Errorf("root-ca-cert-publisher: %w", err)
	}
	pdb, err := newDisruptionController(ctx, pdbClient, pdbCfg, factory)
	if err != nil {
		return fmt.Errorf("disruption controller: %w", err)
	}

	volumeControllers, err := newVolumeControllers(ctx, &cl, factory)
	if err != nil {
		return err
	}

	gc, gcSync, err := newGarbageCollector(ctx, cfg, factory)
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}

	// Controllers register their informers in their constructors; start
	// the factory after all of them, then wait for the caches.
	if err := startAndSync(ctx, factory); err != nil {
		return err
	}
	go dc.Run(ctx, deploymentWorkers)
	go rsc.Run(ctx, replicaSetWorkers)
	go sac.Run(ctx, saWorkers)
	go nsc.Run(ctx, namespaceWorkers)
	go rcm.Run(ctx, rcWorkers)
	go pub.Run(ctx, rootCAWorkers)
	go pdb.Run(ctx)
	for _, run := range volumeControllers {
		go run(ctx)
	}
	gcSync()

	return waitGCSynced(ctx, gc)
}

// waitGCSynced: the GC builds its dependency graph from one monitor per
// deletable resource; wait until they have synced so "ready" means deletes
// cascade.
func waitGCSynced(ctx context.Context, gc *garbagecollector.GarbageCollector) error {
	logger := klog.FromContext(ctx)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return gc.IsSynced(logger), nil
	})
	if err != nil {
		return fmt.Errorf("garbage collector monitors did not sync: %w", err)
	}
	return nil
}

// newGarbageCollector builds the GC on typed informers (shared) plus
// metadata informers for every other resource. The returned function
// starts it; the GC starts its own monitors' informers.
func newGarbageCollector(ctx context.Context, cfg *rest.Config, factory informers.SharedInformerFactory) (*garbagecollector.GarbageCollector, func(), error) {
	c := rest.CopyConfig(cfg)
	c.UserAgent = "kube-lab/garbage-collector"
	client, err := newClient(c, c.UserAgent)
	if err != nil {
		return nil, nil, err
	}
	meta, err := metadata.NewForConfig(c)
	if err != nil {
		return nil, nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cacheddiscovery.NewMemCacheClient(client.Discovery()))
	mapper.Reset()
	metaFactory := metadatainformer.NewSharedInformerFactory(meta, 0)
	started := make(chan struct{})
	close(started) // our factory is started before the GC runs
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, meta, mapper,
		garbagecollector.DefaultIgnoredResources(),
		informerfactory.NewInformerFactory(factory, metaFactory), started)
	if err != nil {
		return nil, nil, err
	}
	const period = 30 * time.Second // kcm's discovery resync period
	run := func() {
		go wait.Until(mapper.Reset, period, ctx.Done())
		go gc.Run(ctx, gcWorkers, period)
		go gc.Sync(ctx, client.Discovery(), period)
	}
	return gc, run, nil
}

// newDisruptionController builds it as kube-controller-manager does: it
// finds a PDB's pods' controllers through the scale subresource, hence the
// discovery-backed REST mapper and scale client.
func newDisruptionController(ctx context.Context, client kubernetes.Interface, cfg *rest.Config,
	factory informers.SharedInformerFactory) (*disruption.DisruptionController, error) {
	cached := cacheddiscovery.NewMemCacheClient(client.Discovery())
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	scales, err := scale.NewForConfig(cfg, mapper, dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(cached))
	if err != nil {
		return nil, err
	}
	go wait.Until(mapper.Reset, 30*time.Second, ctx.Done())
	return disruption.NewDisruptionController(ctx,
		factory.Core().V1().Pods(), factory.Policy().V1().PodDisruptionBudgets(),
		factory.Core().V1().ReplicationControllers(), factory.Apps().V1().ReplicaSets(),
		factory.Apps().V1().Deployments(), factory.Apps().V1().StatefulSets(),
		client, mapper, scales, client.Discovery()), nil
}
