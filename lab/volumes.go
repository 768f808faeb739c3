package main

// The controllers between a claim and its volume, constructed as
// kube-controller-manager constructs them (cmd/kube-controller-manager/app,
// core.go and apps.go of the pinned release) on the lab's shared informers:
//
//   persistentvolume-binder: binds claims to volumes (pre-bound ones
//   included: a scheduler takes a claim as bound only once this controller
//   has marked it so). Dynamic provisioning on, as in kcm: for a claim of
//   a StorageClass it sets volume.kubernetes.io/storage-provisioner (for an
//   Immediate class at once, for a WaitForFirstConsumer one only once the
//   scheduler has written volume.kubernetes.io/selected-node), which is
//   what an external provisioner (--storage, provisioner.go) waits for.
//   It has no volume plugins: it provisions, recycles and deletes nothing
//   itself, every class's provisioner is external.
//   ephemeral-volume: creates the claim of a pod's generic ephemeral
//   volume from its template (owned by the pod).
//   statefulset: a StatefulSet's pods and the claims of its
//   volumeClaimTemplates.
//   pvc-protection and pv-protection: the apiserver's
//   StorageObjectInUseProtection admission puts their finalizers on every
//   claim and volume; without them a deleted claim or volume would stay
//   Terminating for ever (and a released volume would never be reclaimed).

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/controller/volume/ephemeral"
	"k8s.io/kubernetes/pkg/controller/volume/persistentvolume"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/controller/volume/pvprotection"
)

// kube-controller-manager's defaults: --concurrent-statefulset-syncs,
// --concurrent-ephemeralvolume-syncs, --pvclaimbinder-sync-period.
const (
	statefulSetWorkers     = 5
	ephemeralVolumeWorkers = 5
	pvBinderSyncPeriod     = 15 * time.Second
)

// newVolumeControllers builds them on factory (to be started after)
// and returns what runs them.
func newVolumeControllers(ctx context.Context, cl *clients, factory informers.SharedInformerFactory) ([]func(context.Context), error) {
	// Each its own client, under kcm's user agent for it. A failure would
	// be kept in cl.err, checked below; none comes in practice: the same
	// config has made the other controllers' clients already.
	client := func(name string) kubernetes.Interface {
		c, _ := cl.forName(name)
		return c
	}
	binder, err := persistentvolume.NewController(ctx, persistentvolume.ControllerParameters{
		KubeClient:                client("persistent-volume-binder"),
		SyncPeriod:                pvBinderSyncPeriod,
		VolumeInformer:            factory.Core().V1().PersistentVolumes(),
		ClaimInformer:             factory.Core().V1().PersistentVolumeClaims(),
		ClassInformer:             factory.Storage().V1().StorageClasses(),
		PodInformer:               factory.Core().V1().Pods(),
		NodeInformer:              factory.Core().V1().Nodes(),
		EnableDynamicProvisioning: true, // kcm's --enable-dynamic-provisioning default
	})
	if err != nil {
		return nil, fmt.Errorf("persistentvolume-binder: %w", err)
	}
	ev, err := ephemeral.NewController(ctx, client("ephemeral-volume-controller"),
		factory.Core().V1().Pods(), factory.Core().V1().PersistentVolumeClaims())
	if err != nil {
		return nil, fmt.Errorf("ephemeral-volume controller: %w", err)
	}
	ss := statefulset.NewStatefulSetController(ctx,
		factory.Core().V1().Pods(), factory.Apps().V1().StatefulSets(),
		factory.Core().V1().PersistentVolumeClaims(), factory.Apps().V1().ControllerRevisions(), client("statefulset-controller"))
	logger := klog.FromContext(ctx)
	pvcp, err := pvcprotection.NewPVCProtectionController(logger,
		factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().Pods(), client("pvc-protection-controller"))
	if err != nil {
		return nil, fmt.Errorf("pvc-protection controller: %w", err)
	}
	pvp := pvprotection.NewPVProtectionController(logger, factory.Core().V1().PersistentVolumes(),
		client("pv-protection-controller"))
	if cl.err != nil {
		return nil, cl.err
	}
	return []func(context.Context){
		binder.Run,
		func(ctx context.Context) { ev.Run(ctx, ephemeralVolumeWorkers) },
		func(ctx context.Context) { ss.Run(ctx, statefulSetWorkers) },
		func(ctx context.Context) { pvcp.Run(ctx, 1) }, // kcm runs one worker of each
		func(ctx context.Context) { pvp.Run(ctx, 1) },
	}, nil
}
