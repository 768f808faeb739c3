package main

// --storage: a dynamic provisioner on the storage SIG's library
// (sigs.k8s.io/sig-storage-lib-external-provisioner), the controller every
// out-of-tree provisioner of that family runs (rancher's local-path, which
// kind installs, among them), and the StorageClasses that use it.
//
// The library does what such a provisioner does in a cluster: it watches
// claims the persistentvolume-binder (volumes.go) has handed to its name,
// waits for the scheduler's selected-node on WaitForFirstConsumer ones,
// calls Provision, writes the PV with its claimRef (the binder then binds
// the two), calls Delete for released PVs of reclaim policy Delete and
// removes them. Only Provision and Delete are ours. No disk is made: the
// fake kubelet never mounts, so a hostPath PV pinned by node affinity is
// all a scheduler can tell from a real local volume.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

const (
	// labProvisioner is the provisioner name the lab's StorageClasses name.
	labProvisioner = "lab.toysched.dev/hostpath"
	// topologyParam is the StorageClass parameter that says what a volume
	// is pinned to: "node" (default: the node's hostname label, a local
	// disk) or "zone" (its topology.kubernetes.io/zone label, a zonal disk
	// any node of the zone reaches).
	topologyParam = "topology"
	// volumeDir is where the hostPath PVs point; nothing is created there.
	volumeDir = "/var/lib/kube-lab/volumes/"
)

// hostPathProvisioner is the library's Provisioner: nodes tell it the
// selected node's labels.
type hostPathProvisioner struct {
	nodes corelisters.NodeLister
}

var _ controller.Provisioner = (*hostPathProvisioner)(nil)

// topologyKey is the node label a class pins its volumes by.
func topologyKey(class *storagev1.StorageClass) (string, error) {
	switch t := class.Parameters[topologyParam]; t {
	case "", "node":
		return corev1.LabelHostname, nil
	case "zone":
		return corev1.LabelTopologyZone, nil
	default:
		return "", fmt.Errorf("StorageClass %s: parameter %s=%q: want node or zone", class.Name, topologyParam, t)
	}
}

// Provision makes a PV for the claim: its capacity and access modes, and a
// required node affinity to one value of the class's topology key: the
// selected node's (WaitForFirstConsumer), else, for an Immediate class,
// one chosen among the nodes' values that the class's allowedTopologies
// admit, from a hash of the claim's name, as the in-tree cloud
// provisioners chose a zone (StatefulSet claims spread by ordinal).
func (p *hostPathProvisioner) Provision(ctx context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	class := opts.StorageClass
	key, err := topologyKey(class)
	if err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	var value string
	if opts.SelectedNodeName != "" {
		node, err := p.nodes.Get(opts.SelectedNodeName)
		if err != nil {
			return nil, controller.ProvisioningNoChange, err
		}
		if !v1helper.MatchTopologySelectorTerms(class.AllowedTopologies, labels.Set(node.Labels)) {
			// The scheduler should not have picked it; let it pick again.
			return nil, controller.ProvisioningReschedule,
				fmt.Errorf("node %s is outside StorageClass %s's allowedTopologies", node.Name, class.Name)
		}
		if value = node.Labels[key]; value == "" {
			return nil, controller.ProvisioningReschedule, fmt.Errorf("node %s has no label %s", node.Name, key)
		}
	} else if value, err = p.chooseDomain(class, key, opts.PVC.Name); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	return p.volume(opts, key, value), controller.ProvisioningFinished, nil
}

// chooseDomain picks the value of key for a claim no scheduler placed.
func (p *hostPathProvisioner) chooseDomain(class *storagev1.StorageClass, key, claimName string) (string, error) {
	nodes, err := p.nodes.List(labels.Everything())
	if err != nil {
		return "", err
	}
	domains := sets.NewString()
	for _, n := range nodes {
		if v := n.Labels[key]; v != "" && v1helper.MatchTopologySelectorTerms(class.AllowedTopologies, labels.Set(n.Labels)) {
			domains.Insert(v)
		}
	}
	chosen := volumehelpers.ChooseZonesForVolume(domains, claimName, 1)
	if chosen.Len() == 0 {
		return "", fmt.Errorf("no node with label %s within StorageClass %s's allowedTopologies", key, class.Name)
	}
	return chosen.List()[0], nil
}

// volume is the PV itself; the library adds the claimRef, the class and
// the pv.kubernetes.io/provisioned-by annotation.
func (p *hostPathProvisioner) volume(opts controller.ProvisionOptions, key, value string) *corev1.PersistentVolume {
	class, claim := opts.StorageClass, opts.PVC
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{
				corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage],
			},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeReclaimPolicy: reclaim,
			MountOptions:                  class.MountOptions,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: volumeDir + opts.PVName, Type: &dirOrCreate},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value},
				}}}},
			}},
		},
	}
}

// Delete has no disk to remove: the library then deletes the PV object.
func (p *hostPathProvisioner) Delete(context.Context, *corev1.PersistentVolume) error {
	return nil
}

// startProvisioner runs the library's controller for labProvisioner, on
// informers of its own that have synced when it returns, without leader
// election (one lab, one provisioner) or a metrics port.
func startProvisioner(ctx context.Context, cfg *rest.Config) error {
	client, err := newClient(cfg, "kube-lab/provisioner")
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	p := &hostPathProvisioner{nodes: factory.Core().V1().Nodes().Lister()}
	pc := controller.NewProvisionController(ctx, client, labProvisioner, p,
		controller.LeaderElection(false),
		controller.ClaimsInformer(factory.Core().V1().PersistentVolumeClaims().Informer()),
		controller.VolumesInformer(factory.Core().V1().PersistentVolumes().Informer()),
		controller.ClassesInformer(factory.Storage().V1().StorageClasses().Informer()))
	// The library added its handlers and indexers in the constructor;
	// started and synced here, "ready" means claims are seen.
	if err := startAndSync(ctx, factory); err != nil {
		return err
	}
	go pc.Run(ctx)
	return nil
}
