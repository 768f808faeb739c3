package main

// --node-images: the images the fake nodes report in status.images, so that
// tests of kube-scheduler's ImageLocality (and of a scheduler that mirrors
// it) have image sizes and spread to score. No kubelet ever refreshes them:
// they are what the flag said when the node was created.

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// nodeImagesHelp is the flag's help: the SPEC format is a contract with tests.
const nodeImagesHelp = "images in status.images of the fake nodes: comma-separated NODE=IMAGE@SIZE, " +
	"e.g. lab-node-1=docker.io/library/nginx:1.27@150Mi,lab-node-1=registry.k8s.io/pause:3.9@700Ki; " +
	"NODE is lab-node-<i> with i <= --nodes, a node may be listed more than once; IMAGE is the name as " +
	"status.images shows it (kube-scheduler only adds :latest to a pod's untagged image); SIZE is a quantity " +
	"(sizeBytes), after the last @, so IMAGE may hold a digest; nodes kept from an earlier run on DIR keep their images"

// parseNodeImages turns SPEC into each node's images, by node number, in
// the order given. nodes is --nodes: an entry for a node the lab does not
// make would be silently lost, so it is an error.
func parseNodeImages(spec string, nodes int) (map[int][]corev1.ContainerImage, error) {
	out := map[int][]corev1.ContainerImage{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	seen := map[string]bool{}
	for _, entry := range strings.Split(spec, ",") {
		i, img, err := parseNodeImage(strings.TrimSpace(entry), nodes)
		if err != nil {
			return nil, fmt.Errorf("--node-images %q: %v", entry, err)
		}
		key := nodeName(i) + "=" + img.Names[0]
		if seen[key] {
			return nil, fmt.Errorf("--node-images %q: listed twice", entry)
		}
		seen[key] = true
		out[i] = append(out[i], img)
	}
	return out, nil
}

// parseNodeImage reads one NODE=IMAGE@SIZE entry.
func parseNodeImage(entry string, nodes int) (int, corev1.ContainerImage, error) {
	var img corev1.ContainerImage
	node, rest, ok := strings.Cut(entry, "=")
	if !ok {
		return 0, img, fmt.Errorf("want NODE=IMAGE@SIZE")
	}
	m := labNodeRE.FindStringSubmatch(node)
	if m == nil {
		return 0, img, fmt.Errorf("node %q is not lab-node-<i>", node)
	}
	i, err := strconv.Atoi(m[1])
	if err != nil || i > nodes {
		return 0, img, fmt.Errorf("%s: the lab makes only lab-node-1..%d (--nodes %d)", node, nodes, nodes)
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return 0, img, fmt.Errorf("no @SIZE after the image (want NODE=IMAGE@SIZE)")
	}
	name, size := rest[:at], rest[at+1:]
	if name == "" || strings.ContainsAny(name, " \t=") {
		return 0, img, fmt.Errorf("image name %q is empty or holds a blank or '='", name)
	}
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return 0, img, fmt.Errorf("size %q is not a quantity (e.g. 150Mi)", size)
	}
	if q.Sign() < 0 {
		return 0, img, fmt.Errorf("size %q is negative", size)
	}
	img.Names = []string{name}
	img.SizeBytes = q.Value() // a fraction of a byte rounds up
	return i, img, nil
}
