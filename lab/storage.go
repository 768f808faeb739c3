package main

// The storage objects the lab installs: --storage's StorageClasses (as
// kind installs its `standard` class for its provisioner) and, with
// --csi-driver, a CSIDriver and the CSINode objects a kubelet registers
// for a node-plugin of that driver, whose allocatable count is what
// kube-scheduler's NodeVolumeLimits reads. Objects that exist already
// (an earlier run on DIR, or a test's own) are kept as they are, as nodes
// are.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	csiplugins "k8s.io/csi-translation-lib/plugins"
)

const (
	// defaultClass is --storage's default StorageClass: its volumes wait
	// for the scheduler's choice of node and are pinned to it.
	defaultClass = "lab-standard"
	// immediateClass is provisioned as soon as a claim names it, before any
	// pod: the scheduler must then go where the volume is.
	immediateClass = "lab-immediate"
)

// storageFlags registers the storage options on fs.
func storageFlags(fs *pflag.FlagSet, f *labFlags) {
	fs.BoolVar(&f.storage, "storage", false, "run a dynamic provisioner ("+labProvisioner+", hostPath PVs pinned to the selected node, or its zone with "+
		"StorageClass parameter "+topologyParam+": zone) and install StorageClasses "+defaultClass+" (default, WaitForFirstConsumer) and "+
		immediateClass+" (Immediate); needs --controllers")
	fs.StringVar(&f.csiDriver, "csi-driver", "", "create a CSIDriver NAME and, for every lab node without one, a CSINode with that driver "+
		"(topologyKeys: the node's hostname and zone labels), as a kubelet registers them")
	fs.IntVar(&f.csiAttachLimit, "csi-attach-limit", -1, "allocatable.count of --csi-driver on each CSINode (the volumes NodeVolumeLimits lets on a node); < 0 = no count")
}

func checkStorageFlags(f *labFlags) error {
	if f.storage && !f.controllers {
		return fmt.Errorf("--storage needs --controllers (the persistentvolume-binder hands claims to the provisioner and binds its volumes)")
	}
	if f.csiAttachLimit >= 0 && f.csiDriver == "" {
		return fmt.Errorf("--csi-attach-limit needs --csi-driver")
	}
	if f.csiAttachLimit > math.MaxInt32 {
		return fmt.Errorf("--csi-attach-limit %d: more than an int32", f.csiAttachLimit)
	}
	return nil
}

// startStorage creates the CSI objects (--csi-driver) and, with --storage,
// the StorageClasses and the provisioner.
func startStorage(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, f *labFlags) error {
	if err := createCSIObjects(ctx, client, f); err != nil {
		return err
	}
	if !f.storage {
		return nil
	}
	if err := ensureStorageClasses(ctx, client); err != nil {
		return err
	}
	return startProvisioner(ctx, cfg)
}

// ensureStorageClasses creates the two classes of labProvisioner.
func ensureStorageClasses(ctx context.Context, client kubernetes.Interface) error {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	immediate := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimDelete
	classes := []storagev1.StorageClass{{
		ObjectMeta: metav1.ObjectMeta{Name: defaultClass, Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true",
		}},
		Provisioner: labProvisioner, VolumeBindingMode: &wffc, ReclaimPolicy: &reclaim,
	}, {
		ObjectMeta:  metav1.ObjectMeta{Name: immediateClass},
		Provisioner: labProvisioner, VolumeBindingMode: &immediate, ReclaimPolicy: &reclaim,
	}}
	for i := range classes {
		_, err := client.StorageV1().StorageClasses().Create(ctx, &classes[i], metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("StorageClass %s: %w", classes[i].Name, err)
		}
	}
	return nil
}

// migratedPlugins is the annotation a v1.36 kubelet puts on its CSINode:
// the in-tree plugins whose volumes CSI migration hands to CSI drivers
// (pkg/volume/csi's list; the scheduler counts their volumes against the
// CSI drivers' limits when they are listed).
func migratedPlugins() string {
	p := []string{
		csiplugins.GCEPDInTreePluginName, csiplugins.AWSEBSInTreePluginName, csiplugins.CinderInTreePluginName,
		csiplugins.AzureDiskInTreePluginName, csiplugins.AzureFileInTreePluginName, csiplugins.VSphereInTreePluginName,
		csiplugins.PortworxVolumePluginName,
	}
	sort.Strings(p)
	return strings.Join(p, ",")
}

// createCSIObjects: the CSIDriver, then a CSINode for each lab node,
// owned by its Node as a kubelet's is (deleting the node deletes it).
func createCSIObjects(ctx context.Context, client kubernetes.Interface, f *labFlags) error {
	if f.csiDriver == "" {
		return nil
	}
	attach := true
	driver := &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: f.csiDriver},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       &attach,
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
	_, err := client.StorageV1().CSIDrivers().Create(ctx, driver, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("CSIDriver %s: %w", f.csiDriver, err)
	}
	for i := 1; i <= f.nodes; i++ {
		if err := createCSINode(ctx, client, nodeName(i), f); err != nil {
			return err
		}
	}
	return nil
}

func createCSINode(ctx context.Context, client kubernetes.Interface, name string, f *labFlags) error {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	keys := []string{corev1.LabelHostname}
	if _, ok := node.Labels[corev1.LabelTopologyZone]; ok {
		keys = append(keys, corev1.LabelTopologyZone)
	}
	sort.Strings(keys)
	d := storagev1.CSINodeDriver{Name: f.csiDriver, NodeID: name, TopologyKeys: keys}
	if f.csiAttachLimit >= 0 {
		n := int32(f.csiAttachLimit)
		d.Allocatable = &storagev1.VolumeNodeResources{Count: &n}
	}
	csiNode := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{corev1.MigratedPluginsAnnotationKey: migratedPlugins()},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID,
			}},
		},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{d}},
	}
	_, err = client.StorageV1().CSINodes().Create(ctx, csiNode, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("CSINode %s: %w", name, err)
	}
	return nil
}
