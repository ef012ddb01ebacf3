package procruntime

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// localIP is the pod's and the node's address when Runtime.Address is empty: a local process
// shares this machine's network.
const localIP = "127.0.0.1"

// address is the node's and its pods' IP address.
func (r *Runtime) address() string {
	if r.Address == "" {
		return localIP
	}
	return r.Address
}

// localNode is spec.nodeName of a pod that names no node (a Deployment's pod template).
const localNode = "local"

// fieldValue is the downward API's value of fieldPath for pod, as the kubelet computes it for env
// (fieldRef) and downwardAPI files.
func fieldValue(pod *corev1.Pod, fieldPath, ip string) (string, error) {
	if key, ok := subscript(fieldPath, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(fieldPath, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		if pod.Spec.NodeName != "" {
			return pod.Spec.NodeName, nil
		}
		return localNode, nil
	case "spec.serviceAccountName":
		return serviceAccountName(&pod.Spec), nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return ip, nil
	}
	return "", fmt.Errorf("fieldPath %q is not supported (supported: metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations, metadata.labels['key'], metadata.annotations['key'], spec.nodeName, spec.serviceAccountName, status.podIP(s), status.hostIP(s))", fieldPath)
}

// subscript parses prefix['key'] and returns key.
func subscript(fieldPath, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(fieldPath, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap renders labels or annotations as the kubelet's downward API does: key="value" lines
// (value quoted as Go quotes it), sorted by key.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return strings.Join(lines, "\n")
}

// serviceAccountName is the pod's service account, "default" when unset as the API server's
// admission sets it.
func serviceAccountName(spec *corev1.PodSpec) string {
	if spec.ServiceAccountName != "" {
		return spec.ServiceAccountName
	}
	if spec.DeprecatedServiceAccount != "" {
		return spec.DeprecatedServiceAccount
	}
	return "default"
}

// resourceValue is the downward API's value of a container's limit or request, divided by the
// selector's divisor and rounded up. An unset limit is the node's allocatable amount, as on a
// kubelet; the node here is this machine.
func resourceValue(c *corev1.Container, sel *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	divisor := sel.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(sel.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("resource %q is not supported (supported: limits.cpu, limits.memory, limits.ephemeral-storage and the same requests)", sel.Resource)
	}
	res := corev1.ResourceName(name)
	if res != corev1.ResourceCPU && res != corev1.ResourceMemory && res != corev1.ResourceEphemeralStorage {
		return "", fmt.Errorf("resource %q is not supported (supported: limits.cpu, limits.memory, limits.ephemeral-storage and the same requests)", sel.Resource)
	}
	list := c.Resources.Requests
	if kind == "limits" {
		list = c.Resources.Limits
	}
	q, set := list[res]
	if kind == "limits" && (!set || q.IsZero()) {
		q = allocatable[res]
	}
	if res == corev1.ResourceCPU {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// hostAllocatable is this machine's CPUs, memory and the free space of dir: the allocatable
// amounts of the "node" local processes run on.
func hostAllocatable(dir string) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		out[corev1.ResourceMemory] = *resource.NewQuantity(int64(si.Totalram)*int64(si.Unit), resource.BinarySI)
	}
	// The folder may not exist yet: its nearest existing parent is on the same file system, most
	// likely.
	for dir != filepath.Dir(dir) {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil {
		out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(fs.Bavail)*fs.Bsize, resource.BinarySI)
	}
	return out
}

// findContainer returns the pod's container (or init container) of that name; "" is the first
// container.
func findContainer(spec *corev1.PodSpec, name string) (*corev1.Container, error) {
	if name == "" && len(spec.Containers) > 0 {
		return &spec.Containers[0], nil
	}
	var names []string
	for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i], nil
			}
			names = append(names, list[i].Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("spec.containers is empty")
	}
	return nil, fmt.Errorf("no container %q (containers: %s)", name, strings.Join(names, ", "))
}
